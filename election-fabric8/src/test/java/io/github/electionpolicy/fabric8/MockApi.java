package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One fabric8 mock API server in CRUD mode (it enforces resourceVersion conflicts with 409), reached over
 * HTTP by real clients, one per replica; plus the settings and decisions the tests share. Register it as
 * an instance field with {@code @RegisterExtension}: each test gets a fresh server, shut down after it.
 */
final class MockApi implements AutoCloseable, AfterEachCallback {

  static final String NAMESPACE = "elections";
  static final String LEASE = "orders-controller";
  static final Duration LEASE_DURATION = Duration.ofSeconds(2);
  static final Duration RENEW_DEADLINE = Duration.ofMillis(1500);
  static final Duration RETRY_PERIOD = Duration.ofMillis(200);

  static final ElectionDecision CONTEND = ElectionPolicy.defaults().decide(
      Environment.of(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "443")),
      Substrate.usingKubernetesApi("kubernetes"));
  static final ElectionDecision RUN_UNELECTED = ElectionPolicy.defaults().decide(
      Environment.of(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "443",
          "LEADER_ELECTION_ENABLED", "false")),
      Substrate.usingKubernetesApi("kubernetes"));

  // Held strongly: java.util.logging forgets the level of a logger nobody references.
  private static final java.util.logging.Logger MOCK_SERVER_LOG = quiet("io.fabric8.mockwebserver");

  final KubernetesMockServer server;
  /** The Lease writes the server accepted, if this server logs them; else null. */
  final LeaseWriteLog writes;
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final List<TcpProxy> proxies = new ArrayList<>();
  private volatile Set<String> deniedVerbs = Set.of();
  private boolean stopped;

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
    logger.setLevel(java.util.logging.Level.WARNING);
    return logger;
  }

  MockApi() {
    this(false);
  }

  /** A server that also records every Lease write it accepts in {@link #writes} when {@code logWrites}. */
  MockApi(boolean logWrites) {
    this(logWrites, d -> d);
  }

  /** A server whose dispatcher is wrapped by {@code decorate}, e.g. to inject latency or concurrent writes. */
  MockApi(boolean logWrites,
      java.util.function.UnaryOperator<io.fabric8.mockwebserver.http.Dispatcher> decorate) {
    MockServerWatchdog.ensureRunning();
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    KubernetesMixedDispatcher dispatcher = new KubernetesMixedDispatcher(responses);
    writes = logWrites ? new LeaseWriteLog(dispatcher, NAMESPACE) : null;
    server = new KubernetesMockServer(new Context(), new MockWebServer(), responses,
        decorate.apply(writes == null ? dispatcher : writes), false);
    server.init(InetAddress.getLoopbackAddress(), 0);
  }

  /** Answers SelfSubjectAccessReviews like an API server would: allowed unless the verb is denied. */
  MockApi answeringAccessReviews() {
    server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .andReply(201, request -> {
          SelfSubjectAccessReview review =
              Serialization.unmarshal(request.getUtf8Body(), SelfSubjectAccessReview.class);
          String verb = review.getSpec().getResourceAttributes().getVerb();
          SubjectAccessReviewStatus status = new SubjectAccessReviewStatus();
          status.setAllowed(!deniedVerbs.contains(verb));
          review.setStatus(status);
          return review;
        }).always();
    return this;
  }

  MockApi denying(Set<String> verbs) {
    deniedVerbs = Set.copyOf(verbs);
    return this;
  }

  String url() {
    return server.url("/");
  }

  /**
   * A new client of its own, with the client's default retry and timeout settings. It connects through a
   * proxy of its own, so the fixture can cut every connection at tear-down whatever state the client is in
   * (a test may have closed it abruptly), before the server shuts down.
   */
  KubernetesClient client() {
    try {
      return client(proxy().url());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  KubernetesClient client(String url) {
    return client(url, null);
  }

  /** A client like {@link #client()} whose requests carry {@code userAgent}, so the server can tell them apart. */
  KubernetesClient clientNamed(String userAgent) {
    try {
      return client(proxy().url(), userAgent);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private KubernetesClient client(String url, String userAgent) {
    ConfigBuilder builder = new ConfigBuilder(Config.empty())
        .withMasterUrl(url)
        .withNamespace(NAMESPACE);
    if (userAgent != null) {
      builder.withUserAgent(userAgent);
    }
    Config config = builder.build();
    KubernetesClient client = new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientFactory(new JdkHttpClientFactory())
        .build();
    closeables.add(client);
    return client;
  }

  TcpProxy proxy() throws IOException {
    TcpProxy proxy = new TcpProxy(server.getPort());
    proxies.add(proxy);
    return proxy;
  }

  /** Every holder identity the Lease showed, in order, as seen by a watch. */
  List<String> watchHolders() {
    List<String> holders = new CopyOnWriteArrayList<>();
    Watch watch = client().leases().inNamespace(NAMESPACE).withName(LEASE).watch(new Watcher<Lease>() {
      @Override
      public void eventReceived(Action action, Lease lease) {
        String holder = lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
        holders.add(holder == null ? "" : holder);
      }

      @Override
      public void onClose(WatcherException cause) {}
    });
    closeables.add(watch);
    return holders;
  }

  Lease lease() {
    return client().leases().inNamespace(NAMESPACE).withName(LEASE).get();
  }

  /** Writes another holder into the Lease, as a foreign writer would, re-reading after each conflict. */
  void takeLeaseAs(String holder) {
    while (true) {
      try {
        client().leases().inNamespace(NAMESPACE).resource(
            new io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder(lease())
                .editSpec().withHolderIdentity(holder).endSpec().build()).update();
        return;
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
      }
    }
  }

  static LeaseSettings.Builder fastSettings(String identity) {
    return LeaseSettings.builder()
        .leaseName(LEASE)
        .namespace(NAMESPACE)
        .identity(identity)
        .leaseDuration(LEASE_DURATION)
        .renewDeadline(RENEW_DEADLINE)
        .retryPeriod(RETRY_PERIOD)
        .stopTimeout(Duration.ofSeconds(2))
        .lossPolicy(LossPolicy.recontend());
  }

  void stopServer() {
    stopped = true;
    server.shutdown();
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    close();
  }

  @Override
  public void close() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      try {
        closeables.get(i).close();
      } catch (Exception ignored) {
        // Best effort: a test may have closed it already.
      }
    }
    for (TcpProxy proxy : proxies) {
      proxy.close();
    }
    if (!stopped) {
      server.destroy();
    }
  }
}
