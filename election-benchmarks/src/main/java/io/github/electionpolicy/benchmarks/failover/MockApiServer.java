package io.github.electionpolicy.benchmarks.failover;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The embedded Lease API of {@code election-testkit-fabric8} (fabric8's mock API server in CRUD mode over plain
 * HTTP on the loopback address, which enforces {@code resourceVersion} conflicts like a real API server), with
 * every Lease request counted per replica in the shared {@link EventLog} by a {@link LeaseTrafficDispatcher} in
 * front of the fixture. Each replica reaches the server through its own {@link ReplicaLink}, so that a crash
 * can drop its connections the way a dying process does. Thread-safe.
 */
public final class MockApiServer implements AutoCloseable {

  // The mock server logs through java.util.logging; held here so the handler and level stick.
  private static final Logger MOCK_SERVER_LOGGER = Logger.getLogger("io.fabric8.mockwebserver");

  private final LeaseApi api;
  private final LeaseTrafficDispatcher dispatcher;
  private final Map<String, ReplicaLink> replicas = new ConcurrentHashMap<>();
  private final Handler stallRecorder;

  /**
   * Starts the server on a free port of the loopback address.
   *
   * @param log where Lease requests are recorded
   * @param namespace namespace every replica client uses
   */
  public MockApiServer(EventLog log, String namespace) {
    AtomicReference<LeaseTrafficDispatcher> traffic = new AtomicReference<>();
    this.api = LeaseApi.builder()
        .namespace(namespace)
        .target(ApiServerTarget.embedded())
        .dispatcher(fixture -> {
          traffic.set(new LeaseTrafficDispatcher(fixture, log));
          return traffic.get();
        })
        .start();
    this.dispatcher = traffic.get();
    this.stallRecorder = new Handler() {
      @Override
      public void publish(LogRecord record) {
        String message = record.getMessage();
        if (record.getLevel().intValue() >= Level.WARNING.intValue() && message != null
            && message.contains("did not complete")) {
          log.record(EventKind.MOCK_SERVER_STALL, "server", message);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    MOCK_SERVER_LOGGER.addHandler(stallRecorder);
  }

  /**
   * A new client of its own for one replica, on the JDK HTTP client, with fabric8's default request
   * timeouts and retries, connected through a proxy of its own; the server attributes its requests to
   * {@code identity}.
   *
   * @param identity the replica's identity
   * @return a client the caller closes, then calls {@link #disconnect(String)}
   */
  public KubernetesClient newClient(String identity) {
    ReplicaLink replica = api.replica(identity);
    replicas.put(identity, replica);
    return replica.client();
  }

  /**
   * From now on the server answers this replica with 503 and applies none of its requests, as if its
   * process had died; its connections stay open until {@link #cut(String)}.
   *
   * @param identity the replica's identity
   */
  public void refuse(String identity) {
    dispatcher.fence(identity);
  }

  /**
   * Closes every connection of the replica and refuses new ones, as the kernel of a dead process does.
   *
   * @param identity the replica's identity
   */
  public void cut(String identity) {
    ReplicaLink replica = replicas.get(identity);
    if (replica != null) {
      replica.refuseConnections();
    }
  }

  /**
   * Closes the replica's proxy (and its client, if the caller has not) and drops its connections.
   *
   * @param identity the replica's identity
   */
  public void disconnect(String identity) {
    ReplicaLink replica = replicas.remove(identity);
    if (replica != null) {
      replica.close();
    }
  }

  /**
   * The namespace every replica client uses.
   *
   * @return the namespace
   */
  public String namespace() {
    return api.namespace();
  }

  /** Stops the server. */
  @Override
  public void close() {
    replicas.clear();
    MOCK_SERVER_LOGGER.removeHandler(stallRecorder);
    api.close();
  }
}
