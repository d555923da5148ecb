package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * One replica's connection to the API server: its own fabric8 client, which on the embedded server reaches it
 * through a TCP proxy of its own, so a test can cut this replica off alone.
 *
 * <pre>{@code
 * ReplicaLink replica = api.replica("replica-1");
 * ElectionRunner runner = ElectionRunner.builder().client(replica.client())...start();
 * replica.partition();   // its requests hang from now on; the other replicas are unaffected
 * replica.heal();
 * }</pre>
 *
 * <p>Against a real API server (see {@link ApiServerTarget}) on a loopback address (the project's
 * {@code tools/kube-apiserver} script starts one) the replica goes through a TCP proxy too, which passes TLS
 * through, so the faults work the same; only {@link #requestCount()} needs the embedded server (it counts
 * requests the proxy cannot read). Against a real server elsewhere there is no proxy: {@link #client()} works,
 * and the fault methods throw {@link IllegalStateException}. Thread-safe.
 */
public interface ReplicaLink extends AutoCloseable {

  /**
   * The name given to {@link LeaseApi#replica(String)}.
   *
   * @return the name
   */
  String name();

  /**
   * The replica's client, created on first use and closed with the link or the fixture. Its default
   * namespace is {@link LeaseApi#namespace()}; its requests carry the {@code User-Agent}
   * {@link LeaseApi#USER_AGENT_PREFIX} followed by {@link #name()}.
   *
   * @return the same client on every call
   */
  KubernetesClient client();

  /**
   * The URL the replica's client uses: its proxy's on the embedded server, the real server's otherwise. A test
   * that builds a client of its own (other timeouts, impersonation) points it here.
   *
   * @return the URL, ending in {@code /}
   */
  String url();

  /**
   * A network partition: connections stay open but nothing is forwarded either way, so the replica's requests
   * hang until their timeouts.
   *
   * @throws IllegalStateException against a real API server that is not on a loopback address
   */
  void partition();

  /**
   * Drops every connection of the replica and refuses each new one at once, as when the server is down for it
   * or its process died.
   *
   * @throws IllegalStateException against a real API server that is not on a loopback address
   */
  void refuseConnections();

  /**
   * Forwards again after {@link #partition()} or {@link #refuseConnections()}; connections open while cut are
   * dropped, so the client reconnects.
   *
   * @throws IllegalStateException against a real API server that is not on a loopback address
   */
  void heal();

  /**
   * How many requests the server received from this replica's client (every path, every verb, access reviews
   * included). Embedded server only.
   *
   * @return the count so far
   * @throws IllegalStateException against a real API server
   */
  int requestCount();

  /**
   * How many TCP connections this replica's client opened to its proxy, refused ones included; zero means the
   * client sent nothing at all. Works against both targets (the embedded server, and a real one on a loopback
   * address).
   *
   * @return the count so far
   * @throws IllegalStateException against a real API server that is not on a loopback address
   */
  int connectionCount();

  /** Closes the client and the proxy, dropping every connection; closing again does nothing. */
  @Override
  void close();
}
