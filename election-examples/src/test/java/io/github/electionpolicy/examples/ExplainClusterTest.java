package io.github.electionpolicy.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.github.electionpolicy.Environment;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ExplainCluster against fabric8's mock API server over HTTP, and against a closed port. */
class ExplainClusterTest {

  private static final Environment OUTSIDE_POD = Environment.of(Map.of());
  private static final String[] CONTENDING = {"--substrate", "kubernetes", "--uses-kubernetes-api"};

  @TempDir
  Path dir;

  private final Printed out = new Printed();
  private final Printed err = new Printed();

  private int explain(String... args) {
    String[] all = Stream.concat(Stream.of(CONTENDING), Stream.of(args)).toArray(String[]::new);
    return ExplainCluster.run(all, OUTSIDE_POD, out.stream, err.stream, dir.resolve("no-such-namespace-file"));
  }

  @Test
  void printsExplainsDecisionThenTheLeaseTheServerAndAnHonestRbacVerdictOnAPureCrudServer() {
    try (MockCluster cluster = MockCluster.crudOnly()) {
      int status = explain("--master", cluster.url(), "--namespace", "elections", "--lease-name", "orders-controller");

      assertThat(status).as("stderr: %s", err).isEqualTo(ExplainCluster.EXIT_DECIDED);
      assertThat(out.text())
          .contains("outcome:     CONTEND")
          .contains("summary:     Contending for the leader Lease")
          .contains("lease:       elections/orders-controller (from --namespace)")
          .contains("api server:  answers at " + cluster.url())
          // The CRUD mock does not implement SelfSubjectAccessReview: it rejects the review as invalid.
          .contains("rbac:        could not be checked: the SelfSubjectAccessReview for \"get\" failed: HTTP 422")
          .contains("; the adapter would warn and contend anyway")
          .contains("holder:      none: the Lease does not exist yet");
    }
  }

  @Test
  void reportsRbacGrantedWhenTheServerAllowsEveryVerb() {
    try (MockCluster cluster = MockCluster.answeringReviews(Set.of())) {
      explain("--master", cluster.url(), "--namespace", "elections", "--lease-name", "orders-controller");

      assertThat(out.text()).contains("rbac:        granted: get, create, update on leases (coordination.k8s.io) "
          + "in namespace \"elections\"\n");
    }
  }

  @Test
  void reportsTheDeniedVerbsAndTheRoleThatGrantsThem() {
    try (MockCluster cluster = MockCluster.answeringReviews(Set.of("update"))) {
      int status = explain("--master", cluster.url(), "--namespace", "elections", "--lease-name",
          "orders-controller");

      assertThat(status).isEqualTo(ExplainCluster.EXIT_DECIDED);
      assertThat(out.text())
          .contains("rbac:        DENIED: may not update leases (coordination.k8s.io) in namespace \"elections\"; "
              + "the adapter would refuse to start")
          .contains("             kind: Role")
          .contains("resourceNames: [\"orders-controller\"]")
          .contains("verbs: [\"get\", \"update\", \"watch\"]");
    }
  }

  @Test
  void mentionsAMissingWatchAsAdviceOnly() {
    try (MockCluster cluster = MockCluster.answeringReviews(Set.of("watch"))) {
      explain("--master", cluster.url(), "--namespace", "elections", "--lease-name", "orders-controller");

      assertThat(out.text()).contains("rbac:        granted: get, create, update")
          .contains("watch is not, so followers notice a released Lease only at their next poll");
    }
  }

  @Test
  void neverChangesTheLeaseAndShowsItsHolder() {
    try (MockCluster cluster = MockCluster.answeringReviews(Set.of())) {
      Lease before = cluster.createLease("orders-7f9c-abcde");

      explain("--master", cluster.url(), "--namespace", "elections", "--lease-name", "orders-controller");

      assertThat(out.text()).contains("holder:      orders-7f9c-abcde (leaseTransitions=3");
      assertThat(cluster.lease().getMetadata().getResourceVersion())
          .isEqualTo(before.getMetadata().getResourceVersion());
      assertThat(cluster.lease().getSpec()).isEqualTo(before.getSpec());
    }
  }

  @Test
  void reportsThatAnUnreachableApiServerDoesNotAnswerWithoutHanging() throws IOException {
    String closedPort = "http://127.0.0.1:" + closedPort() + "/";
    long start = System.nanoTime();

    int status = explain("--master", closedPort, "--namespace", "elections", "--lease-name", "orders-controller");

    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
    assertThat(status).isEqualTo(ExplainCluster.EXIT_DECIDED);
    assertThat(out.text())
        .contains("api server:  does NOT answer at " + closedPort)
        .contains("rbac:        not checked: the API server does not answer")
        .doesNotContain("holder:");
  }

  @Test
  void takesTheNamespaceFromThePodsServiceAccountFileBeforeTheClients() throws IOException {
    Path file = Files.writeString(dir.resolve("namespace"), "payments\n", StandardCharsets.UTF_8);
    try (MockCluster cluster = MockCluster.answeringReviews(Set.of())) {
      String[] args = Stream.concat(Stream.of(CONTENDING),
          Stream.of("--master", cluster.url(), "--lease-name", "orders-controller")).toArray(String[]::new);

      ExplainCluster.run(args, OUTSIDE_POD, out.stream, err.stream, file);

      assertThat(out.text()).contains("lease:       payments/orders-controller (from the pod's service account, "
          + file + ")");
    }
  }

  @Test
  void takesTheNamespaceFromTheKubeconfigContextWhenNoneIsSetOrMounted() throws IOException {
    try (MockCluster cluster = MockCluster.answeringReviews(Set.of())) {
      Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), String.join("\n",
          "apiVersion: v1",
          "kind: Config",
          "clusters:",
          "- name: mock",
          "  cluster:",
          "    server: " + cluster.url(),
          "users:",
          "- name: operator",
          "  user:",
          "    token: not-checked-by-the-mock",
          "contexts:",
          "- name: mock",
          "  context:",
          "    cluster: mock",
          "    user: operator",
          "    namespace: shipping",
          "current-context: mock",
          ""), StandardCharsets.UTF_8);

      explain("--kubeconfig", kubeconfig.toString(), "--lease-name", "orders-controller");

      assertThat(out.text())
          .contains("lease:       shipping/orders-controller (from the client's configuration")
          .contains("api server:  answers at " + cluster.url());
    }
  }

  @Test
  void checksNothingInTheClusterWhenTheProcessRunsUnelected() {
    int status = ExplainCluster.run(new String[] {"--substrate", "direct", "--master", "http://127.0.0.1:1/"},
        OUTSIDE_POD, out.stream, err.stream);

    assertThat(status).isEqualTo(ExplainCluster.EXIT_DECIDED);
    assertThat(out.text()).contains("outcome:     RUN_UNELECTED")
        .contains("cluster:     not checked: the process runs unelected and makes no Lease call");
  }

  @Test
  void requiresTheLeaseNameWhenTheProcessContends() {
    int status = explain("--master", "http://127.0.0.1:1/");

    assertThat(status).isEqualTo(ExplainCluster.EXIT_INVALID);
    assertThat(err.text()).contains("--lease-name").contains("fix: pass --lease-name NAME");
  }

  @Test
  void rejectsALeaseNameTheAdapterWouldReject() {
    int status = explain("--master", "http://127.0.0.1:1/", "--lease-name", "Orders_Controller");

    assertThat(status).isEqualTo(ExplainCluster.EXIT_INVALID);
    assertThat(err.text()).contains("leaseName=\"Orders_Controller\" is not valid");
  }

  @Test
  void rejectsAnUnknownOptionWithTheUsage() {
    int status = explain("--lease", "orders-controller");

    assertThat(status).isEqualTo(ExplainCluster.EXIT_INVALID);
    assertThat(err.text()).contains("option=\"--lease\" is not valid").contains("usage: explain-cluster");
  }

  @Test
  void passesExplainsOwnErrorsThrough() {
    int status = ExplainCluster.run(new String[] {"--substrate", "kubernetes", "--uses-kubernetes-api"},
        Environment.of(Map.of("LEADER_ELECTION_ENABLED", "maybe")), out.stream, err.stream);

    assertThat(status).isEqualTo(ExplainCluster.EXIT_INVALID);
    assertThat(err.text()).contains("LEADER_ELECTION_ENABLED=\"maybe\" is not valid");
  }

  private static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
