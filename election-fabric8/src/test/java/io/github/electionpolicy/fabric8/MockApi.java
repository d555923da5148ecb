package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The adapter's own tests on the published fixture ({@code election-testkit-fabric8}'s {@link LeaseApi}, always
 * the embedded server: these tests inject faults), under the names some 30 test classes use, plus the
 * settings and decisions they share. Register it as an instance field with {@code @RegisterExtension}: each
 * test gets a fresh server, shut down after it.
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

  final LeaseApi fixture;
  final KubernetesMockServer server;
  /** Clients to URLs of a test's choosing, which the fixture did not hand out. */
  private final List<KubernetesClient> ownClients = new ArrayList<>();
  /** The User-Agent of every Lease watch request the server received. */
  private final List<String> watchRequests = new CopyOnWriteArrayList<>();

  MockApi() {
    this(UnaryOperator.identity());
  }

  /** A server whose dispatcher is wrapped by {@code decorate}, e.g. to inject latency or concurrent writes. */
  MockApi(UnaryOperator<Dispatcher> decorate) {
    fixture = LeaseApi.builder()
        .namespace(NAMESPACE)
        .target(ApiServerTarget.embedded())
        .dispatcher(delegate -> decorate.apply(recordingWatches(delegate)))
        .start();
    server = fixture.mockServer();
  }

  /** Counts the Lease watch requests that reach the server, by the User-Agent that sent them. */
  private Dispatcher recordingWatches(Dispatcher delegate) {
    return new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.contains("/leases") && path.contains("watch=true")) {
          String agent = request.getHeader("User-Agent");
          watchRequests.add(agent == null ? "" : agent);
        }
        return delegate.dispatch(request);
      }
    };
  }

  /**
   * Waits until a Lease watch request from the client named {@code userAgent} ({@link #clientNamed}) reached the
   * server: the follower's watch is opening, so from now on it hears every Lease write as an event.
   *
   * @return whether it came within ten seconds
   */
  boolean awaitWatchFrom(String userAgent) throws InterruptedException {
    return Await.holds(() -> watchRequests.stream().anyMatch(agent -> agent.contains(userAgent)),
        Duration.ofSeconds(10));
  }

  /**
   * Waits until the server has accepted {@code count} more Lease writes that leave {@code holder} in the Lease
   * than it had when called: the server's own evidence that {@code holder} led through {@code count} more retry
   * periods. A test that shows that something does not happen while a replica leads waits for this instead of
   * sleeping a guessed time: the other replicas had as many retry periods to (wrongly) act, however loaded the
   * machine is.
   *
   * @return whether they came in time (three retry periods each, plus ten seconds); false means the holder
   *     stopped writing
   */
  boolean awaitWrites(String holder, int count) throws InterruptedException {
    long before = writesBy(holder);
    return Await.holds(() -> writesBy(holder) >= before + count,
        RETRY_PERIOD.multipliedBy(3L * count).plusSeconds(10));
  }

  private long writesBy(String holder) {
    return writes().stream().filter(write -> write.holder().equals(holder)).count();
  }

  /**
   * Whether {@code request} is a SelfSubjectRulesReview: a test that answers the access reviews its own way
   * answers this one too, with rules that agree ({@link #leaseRulesOnly}), or the fixture's rules (every verb on
   * everything) would be the verdict and its access reviews never asked.
   */
  static boolean isRulesReview(RecordedRequest request) {
    return "POST".equals(request.getMethod())
        && "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews".equals(request.getPath());
  }

  /**
   * A rules review refused (403), as by a server whose Role does not grant it: the preflight's access reviews
   * then decide, Events included.
   */
  static MockResponse rulesReviewRefused() {
    return new MockResponse().setResponseCode(403).setHeader("Content-Type", "application/json")
        .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"Forbidden\","
            + "\"code\":403}");
  }

  /** A rules review's answer listing every verb on leases and nothing else: a Role without the events rule. */
  static MockResponse leaseRulesOnly(RecordedRequest request) {
    var review = LeaseRules.question(NAMESPACE);
    var status = new io.fabric8.kubernetes.api.model.authorization.v1.SubjectRulesReviewStatus();
    status.setIncomplete(false);
    status.setResourceRules(List.of(new io.fabric8.kubernetes.api.model.authorization.v1.ResourceRuleBuilder()
        .withApiGroups("coordination.k8s.io").withResources("leases").withVerbs("*").build()));
    review.setStatus(status);
    return new MockResponse().setResponseCode(201).setHeader("Content-Type", "application/json")
        .setBody(io.fabric8.kubernetes.client.utils.Serialization.asJson(review));
  }

  /** The fixture answers SelfSubjectAccessReviews always (an expectation a test sets on {@link #server} wins). */
  MockApi answeringAccessReviews() {
    return this;
  }

  MockApi denying(Set<String> verbs) {
    fixture.denyAccess(verbs);
    return this;
  }

  /** The Lease writes the server accepted, in the order of their resource versions. */
  List<LeaseWrite> writes() {
    return fixture.leaseWrites(LEASE);
  }

  String url() {
    return fixture.url();
  }

  /**
   * A new client of its own, with the client's default retry and timeout settings. It connects through a
   * proxy of its own, so the fixture can cut every connection at tear-down whatever state the client is in
   * (a test may have closed it abruptly), before the server shuts down.
   */
  KubernetesClient client() {
    return fixture.client();
  }

  /** A client to {@code url}, e.g. a {@link #proxy()}'s or a closed port. */
  KubernetesClient client(String url) {
    return client(url, UnaryOperator.identity());
  }

  /** A client to {@code url} whose Config {@code tune} changes, e.g. a user's own watch reconnect interval. */
  KubernetesClient client(String url, UnaryOperator<ConfigBuilder> tune) {
    Config config = tune.apply(new ConfigBuilder(Config.empty()).withMasterUrl(url).withNamespace(NAMESPACE))
        .build();
    // HTTP/1.1 in plain text, not the JDK client's h2c upgrade: the mock server's HTTP/2 now and then loses a
    // response for good (see the testkit's BaseLeaseApi.plainHttpAsHttp11).
    KubernetesClient client = new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientFactory(new JdkHttpClientFactory())
        .withHttpClientBuilderConsumer(io.fabric8.kubernetes.client.http.HttpClient.Builder::preferHttp11)
        .build();
    synchronized (ownClients) {
      ownClients.add(client);
    }
    return client;
  }

  /** A client like {@link #client()} whose requests carry {@code userAgent}, so the server can tell them apart. */
  KubernetesClient clientNamed(String userAgent) {
    return fixture.replica(userAgent).client();
  }

  /** A replica's proxy that a test can cut; connect with {@code client(proxy.url())} or its own client. */
  ReplicaLink proxy() {
    return fixture.replica("proxy");
  }

  /** Every holder identity the Lease showed, in order, as seen by a watch. */
  List<String> watchHolders() {
    return fixture.watchHolders(LEASE);
  }

  Lease lease() {
    return fixture.lease(LEASE).orElse(null);
  }

  /** Writes another holder into the Lease, as a foreign writer would, re-reading after each conflict. */
  void takeLeaseAs(String holder) {
    fixture.overwriteHolder(LEASE, holder);
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
    fixture.stopServer();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    close();
  }

  @Override
  public void close() {
    List<KubernetesClient> toClose;
    synchronized (ownClients) {
      toClose = new ArrayList<>(ownClients);
      ownClients.clear();
    }
    for (KubernetesClient client : toClose) {
      try {
        client.close();
      } catch (RuntimeException ignored) {
        // Best effort: a test may have closed it already.
      }
    }
    fixture.close();
  }
}
