package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;
import org.opentest4j.TestAbortedException;

/**
 * The real-server mode, driven through a kubeconfig file, in isolation: the "cluster" here is a second embedded
 * server that the fixture reaches only through the kubeconfig, as it would a real one. This checks the kubeconfig
 * path, the per-test namespace, the watch-based write log, the proxies and the embedded-only guards; the
 * behaviour of a real API server is checked by {@code election-apiserver-tests}, against kube-apiserver.
 */
class RealServerModeTest {

  @TempDir
  Path dir;

  private LeaseApi cluster;
  private Path kubeconfig;

  @BeforeEach
  void startCluster() throws IOException {
    cluster = LeaseApi.builder().target(ApiServerTarget.embedded()).start();
    kubeconfig = Files.writeString(dir.resolve("kubeconfig"), String.join("\n",
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: test",
        "  cluster:",
        "    server: " + cluster.url(),
        "users:",
        "- name: tester",
        "  user:",
        "    token: not-a-secret",
        "contexts:",
        "- name: test",
        "  context:",
        "    cluster: test",
        "    user: tester",
        "current-context: test",
        ""));
  }

  @AfterEach
  void stopCluster() {
    cluster.close();
  }

  private boolean namespaceExists(String name) {
    return cluster.client().namespaces().withName(name).get() != null;
  }

  @Test
  void eachFixtureWorksInANamespaceOfItsOwnAndDeletesItWhenClosed() {
    String namespace;
    try (LeaseApi api = LeaseApi.builder().namespace("orders").target(ApiServerTarget.kubeconfig(kubeconfig))
        .start()) {
      namespace = api.namespace();
      assertThat(api.isEmbedded()).isFalse();
      assertThat(namespace).matches("orders-[0-9a-f]{8}");
      assertThat(namespaceExists(namespace)).isTrue();
      assertThat(api.url()).isEqualTo(cluster.url());

      api.replica("replica-1").client().leases().resource(new LeaseBuilder().withNewMetadata()
          .withName("orders-controller").endMetadata().withNewSpec().withHolderIdentity("replica-1").endSpec()
          .build()).create();

      assertThat(cluster.lease("orders-controller")).as("not in the cluster's default namespace").isEmpty();
      assertThat(api.lease("orders-controller")).map(lease -> lease.getMetadata().getNamespace())
          .hasValue(namespace);
    }
    assertThat(namespaceExists(namespace)).isFalse();
  }

  @Test
  void leaseWritesAreLearntFromAWatch() throws InterruptedException {
    try (LeaseApi api = LeaseApi.builder().target(ApiServerTarget.kubeconfig(kubeconfig)).start()) {
      Lease created = api.client().leases().resource(new LeaseBuilder().withNewMetadata().withName("l").endMetadata()
          .withNewSpec().withHolderIdentity("a").endSpec().build()).create();
      api.overwriteHolder("l", "b");

      assertThat(EmbeddedLeaseApiTest.await(() -> api.leaseWrites("l").size() == 2)).isTrue();
      assertThat(api.leaseWrites("l")).extracting(LeaseWrite::holder).containsExactly("a", "b");
      assertThat(created.getMetadata().getNamespace()).isEqualTo(api.namespace());
    }
  }

  @Test
  void whatNeedsTheEmbeddedServerFailsWithAMessageThatSaysToAssumeIt() {
    try (LeaseApi api = LeaseApi.builder().target(ApiServerTarget.kubeconfig(kubeconfig)).start()) {
      List<Runnable> embeddedOnly = List.of(() -> api.denyAccess(Set.of("update")), api::stopServer,
          api::mockServer);

      assertThat(embeddedOnly).allSatisfy(call -> assertThatThrownBy(call::run)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("needs the embedded Lease API")
          .hasMessageContaining("call assumeEmbedded()"));
      assertThatThrownBy(api.replica("r")::requestCount)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("use connectionCount()");
      assertThatThrownBy(api::assumeEmbedded).isInstanceOf(TestAbortedException.class);
    }
  }

  /** A server on a loopback address (like the project's real kube-apiserver) is reached through a proxy. */
  @Test
  void aServerOnLoopbackIsReachedThroughAProxyThatTheTestCanCut() throws IOException {
    try (LeaseApi api = LeaseApi.builder().target(ApiServerTarget.kubeconfig(kubeconfig)).start()) {
      ReplicaLink replica = api.replica("r");
      // Another port, the same host name as the kubeconfig's (a certificate names the host, not the port).
      assertThat(replica.url()).isNotEqualTo(cluster.url())
          .startsWith("http://" + java.net.URI.create(cluster.url()).getHost() + ":");
      assertThat(replica.connectionCount()).isZero();

      replica.client().leases().list();
      assertThat(replica.connectionCount()).isPositive();

      replica.refuseConnections();
      // At the TCP level: fabric8's client would retry the refused request with back-off for about 20 s.
      ProxyChecks.assertRefusedAtOnce(replica);
      replica.heal();
      assertThat(replica.client().leases().list().getItems()).isEmpty();
      assertThat(api.replica("unused").connectionCount()).isZero();
    }
  }

  @Test
  void theExtensionFollowsThePropertySkipsTestsThatAssumeTheEmbeddedServerAndCleansUp() {
    String previous = System.getProperty(ApiServerTarget.KUBECONFIG_PROPERTY);
    System.setProperty(ApiServerTarget.KUBECONFIG_PROPERTY, kubeconfig.toString());
    Events events;
    try {
      UserTests.namespaces.clear();
      events = EngineTestKit.engine("junit-jupiter").selectors(selectClass(UserTests.class)).execute()
          .testEvents();
    } finally {
      if (previous == null) {
        System.clearProperty(ApiServerTarget.KUBECONFIG_PROPERTY);
      } else {
        System.setProperty(ApiServerTarget.KUBECONFIG_PROPERTY, previous);
      }
    }

    events.assertStatistics(stats -> stats.started(2).succeeded(1).aborted(1).failed(0));
    assertThat(UserTests.namespaces).hasSize(2).allSatisfy(ns -> assertThat(namespaceExists(ns)).isFalse());
  }

  /** A user's test class, run by {@link #theExtensionFollowsThePropertySkipsTestsThatAssumeTheEmbeddedServerAndCleansUp}. */
  static class UserTests {

    static final List<String> namespaces = new CopyOnWriteArrayList<>();

    @RegisterExtension
    final LeaseApiExtension api = LeaseApiExtension.create();

    @Test
    void runsAnywhere() {
      namespaces.add(api.namespace());
      api.client().leases().list();
    }

    @Test
    void needsFaults() {
      namespaces.add(api.namespace());
      api.assumeEmbedded();
      api.denyAccess(Set.of("update"));
    }
  }
}
