package io.github.electionpolicy.benchmarks.failover;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Collection;

/**
 * The API server every round of one run uses, as {@link ServerMode#start(EventLog)} gives it: fabric8's mock
 * ({@link MockApiServer}) or a real one named by a kubeconfig ({@link RealApiServer}). Either way each replica
 * reaches it through a loopback TCP proxy of its own, so that a crash can take that replica's connections away
 * alone, and either way the server's side records the Lease writes it applied into the shared {@link EventLog}
 * ({@link EventKind#LEASE_WRITE_OK}). Only the mock also counts every Lease request ({@link
 * EventKind#LEASE_REQUEST}). Implementations are thread-safe.
 *
 * <pre>{@code
 * try (ApiServer server = BenchmarkSettings.parse(args).serverMode().start(log)) {
 *   KubernetesClient client = server.newClient("replica-1");
 *   ...
 *   server.crash(List.of("replica-1"));
 * }
 * }</pre>
 */
public interface ApiServer extends AutoCloseable {

  /**
   * A new client of its own for one replica, on the JDK HTTP client with fabric8's default request timeouts and
   * retries, connected through a proxy of its own; its requests carry the replica's identity in their
   * {@code User-Agent}.
   *
   * @param identity the replica's identity
   * @return a client the caller closes, then calls {@link #disconnect(String)}
   */
  KubernetesClient newClient(String identity);

  /**
   * The crash instant of these replicas: from now on the server applies nothing they send, and by the time this
   * returns their connections are closed and new ones are refused, as the kernel of a dead process does.
   *
   * @param identities the replicas' identities
   * @throws InterruptedException when interrupted while the server is being quietened
   */
  void crash(Collection<String> identities) throws InterruptedException;

  /**
   * Closes the replica's proxy (and its client, if the caller has not) and drops its connections.
   *
   * @param identity the replica's identity
   */
  void disconnect(String identity);

  /**
   * The namespace of every Lease and the default of every replica client.
   *
   * @return the namespace
   */
  String namespace();

  /**
   * One line for the output: which server, where, in which namespace.
   *
   * @return the description
   */
  String describe();

  /** Stops the server, or deletes the run's namespace on a real one. */
  @Override
  void close();
}
