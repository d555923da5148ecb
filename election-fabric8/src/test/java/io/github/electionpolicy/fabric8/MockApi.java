package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
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

  MockApi() {
    this(UnaryOperator.identity());
  }

  /** A server whose dispatcher is wrapped by {@code decorate}, e.g. to inject latency or concurrent writes. */
  MockApi(UnaryOperator<Dispatcher> decorate) {
    fixture = LeaseApi.builder()
        .namespace(NAMESPACE)
        .target(ApiServerTarget.embedded())
        .dispatcher(decorate)
        .start();
    server = fixture.mockServer();
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
    Config config = new ConfigBuilder(Config.empty()).withMasterUrl(url).withNamespace(NAMESPACE).build();
    KubernetesClient client = new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientFactory(new JdkHttpClientFactory())
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
