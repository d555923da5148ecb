package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Dispatcher;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * fabric8's mock API server in CRUD mode on a free loopback port, with the fixture's dispatcher in front of
 * the CRUD store (access reviews, request counts) and the write log behind it. Thread-safe.
 */
final class EmbeddedLeaseApi extends BaseLeaseApi {

  // Held strongly: java.util.logging forgets the level of a logger nobody references. The mock server logs
  // every request at INFO.
  private static final java.util.logging.Logger MOCK_SERVER_LOG = quiet("io.fabric8.mockwebserver");

  private final KubernetesMockServer server;
  private final EmbeddedDispatcher dispatcher;
  private final LeaseWriteLog writes;
  private volatile boolean stopped;

  private EmbeddedLeaseApi(String namespace, boolean answerAccessReviews, UnaryOperator<Dispatcher> decorator,
      int port, Consumer<LeaseWrite> writeListener) {
    super(namespace);
    MockServerRuntime.check();
    MockServerWatchdog.ensureRunning();
    // The mock server reads expectations from this map on its own threads while a test adds them.
    Map<ServerRequest, Queue<ServerResponse>> expectations = new ConcurrentHashMap<>();
    writes = new LeaseWriteLog(new KubernetesMixedDispatcher(expectations), writeListener);
    dispatcher = new EmbeddedDispatcher(writes, expectations, answerAccessReviews);
    Dispatcher outermost = Objects.requireNonNull(decorator.apply(dispatcher), "the dispatcher decorator returned null");
    server = new KubernetesMockServer(new Context(), new MockWebServer(), expectations, outermost, false);
    server.init(InetAddress.getLoopbackAddress(), port);
  }

  static EmbeddedLeaseApi start(String namespace, boolean answerAccessReviews, UnaryOperator<Dispatcher> decorator) {
    return start(namespace, answerAccessReviews, decorator, 0, write -> { });
  }

  /** On {@code port} (0: a free one), telling {@code writeListener} of each Lease write as the server stores it. */
  static EmbeddedLeaseApi start(String namespace, boolean answerAccessReviews, UnaryOperator<Dispatcher> decorator,
      int port, Consumer<LeaseWrite> writeListener) {
    return new EmbeddedLeaseApi(namespace, answerAccessReviews, decorator, port, writeListener);
  }

  /** The port the server listens on. */
  int port() {
    return server.getPort();
  }

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
    logger.setLevel(java.util.logging.Level.WARNING);
    return logger;
  }

  @Override
  Config config(String url) {
    return new ConfigBuilder(Config.empty()).withMasterUrl(url == null ? url() : url).build();
  }

  @Override
  String observerUrl() {
    return proxy().url();
  }

  private TcpProxy proxy() {
    try {
      return track(new TcpProxy(server.getPort()));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open a loopback port for a replica's proxy", e);
    }
  }

  @Override
  public boolean isEmbedded() {
    return true;
  }

  @Override
  public String url() {
    return server.url("/");
  }

  @Override
  public ReplicaLink replica(String name) {
    Objects.requireNonNull(name, "name");
    return track(new ProxiedReplicaLink(this, name, proxy(), () -> dispatcher.requestCount(name)));
  }

  @Override
  public List<LeaseWrite> leaseWrites() {
    return writes.writes();
  }

  @Override
  public void denyAccess(Set<String> verbs) {
    dispatcher.deny(verbs);
  }

  @Override
  public void stopServer() {
    stopped = true;
    server.shutdown();
  }

  @Override
  public KubernetesMockServer mockServer() {
    return server;
  }

  @Override
  void shutDown() {
    if (!stopped) {
      server.destroy();
    }
  }

  @Override
  public String toString() {
    return "LeaseApi[embedded at " + url() + ", namespace " + namespace() + "]";
  }
}
