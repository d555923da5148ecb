package io.github.electionpolicy.benchmarks.failover;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import java.time.Duration;
import java.util.Collection;
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
 *
 * <p>A crash here is two steps: the server answers the replica with 503 and applies none of its requests
 * from the crash instant, and 150 ms later its connections are closed. The pause works around a limit of the
 * mock server: it blocks a Vert.x event loop for up to 30 s when a watch connection closes while an event is
 * being written to it (its listener awaits its send executor on the event loop); with every write refused
 * first, no event is in flight when the connections close. Those stalls are still recorded ({@link
 * EventKind#MOCK_SERVER_STALL}) so the output can name the rounds they overlap.
 */
public final class MockApiServer implements ApiServer {

  // The mock server logs through java.util.logging; held here so the handler and level stick.
  private static final Logger MOCK_SERVER_LOGGER = Logger.getLogger("io.fabric8.mockwebserver");

  /** How long the server refuses a crashed replica before its connections are closed; see the class comment. */
  private static final Duration QUIET_BEFORE_DISCONNECT = Duration.ofMillis(150);

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

  @Override
  public KubernetesClient newClient(String identity) {
    ReplicaLink replica = api.replica(identity);
    replicas.put(identity, replica);
    return replica.client();
  }

  @Override
  public void crash(Collection<String> identities) throws InterruptedException {
    identities.forEach(dispatcher::fence);
    Thread.sleep(QUIET_BEFORE_DISCONNECT.toMillis());
    for (String identity : identities) {
      ReplicaLink replica = replicas.get(identity);
      if (replica != null) {
        replica.refuseConnections();
      }
    }
  }

  @Override
  public void disconnect(String identity) {
    ReplicaLink replica = replicas.remove(identity);
    if (replica != null) {
      replica.close();
    }
  }

  @Override
  public String namespace() {
    return api.namespace();
  }

  @Override
  public String describe() {
    return "fabric8 mock API server (CRUD mode) at " + api.url() + ", namespace " + api.namespace()
        + "; Lease requests counted and writes timed by its dispatcher";
  }

  @Override
  public void close() {
    replicas.clear();
    MOCK_SERVER_LOGGER.removeHandler(stallRecorder);
    api.close();
  }
}
