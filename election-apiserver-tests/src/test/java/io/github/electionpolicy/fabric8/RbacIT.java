package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.examples.ExplainCluster;
import io.github.electionpolicy.testsupport.LogCapture;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * RBAC for real: {@code docs/deploy/rbac.yaml} as a service account's only grant, as written and with each verb removed
 * in turn; the adapter's preflight and {@code explain-cluster} judge each case; the RBAC is the real server's.
 */
class RbacIT {

  private static final KubeCluster CLUSTER = KubeCluster.fromSystemProperties();
  private static KubernetesClient admin;

  @TempDir
  Path dir;

  private final ServiceLog log = new ServiceLog();

  @BeforeAll
  static void connect() {
    admin = CLUSTER.admin();
  }

  @AfterAll
  static void disconnect() {
    admin.close();
  }

  /**
   * docs/deploy/rbac.yaml with its three names replaced and {@code removedVerb} (if any) taken out, applied to a fresh
   * namespace (which the manifest says must exist); returns the service account's token.
   */
  private static String applyManifest(String namespace, String removedVerb) throws IOException {
    String manifest = Files.readString(CLUSTER.repo().resolve("docs/deploy/rbac.yaml"))
        .replace("namespace: orders", "namespace: " + namespace);
    if (removedVerb != null) {
      // Without create, its rule goes: the real server refuses a rule with no verbs (422), as the mock does not.
      String createRule = "  - apiGroups: [\"coordination.k8s.io\"]\n    resources: [\"leases\"]\n"
          + "    verbs: [\"create\"]\n";
      assertThat(manifest).contains(createRule);
      manifest = manifest.replace(createRule, removedVerb.equals("create") ? "" : createRule)
          .replace("verbs: [\"get\", \"update\", \"watch\"]", "verbs: [" + String.join(", ",
              KubeCluster.verbs().stream().filter(v -> !v.equals("create") && !v.equals(removedVerb))
                  .map(v -> "\"" + v + "\"").toList()) + "]");
      // The events rule (create on events, for the leadership Events) stays: only the leases rules are judged.
      String leaseRules = manifest.substring(manifest.indexOf("rules:"), manifest.indexOf("resources: [\"events\"]"));
      assertThat(leaseRules).doesNotContain("\"" + removedVerb + "\"");
    }
    KubeCluster.createNamespace(admin, namespace);
    admin.load(new java.io.ByteArrayInputStream(manifest.getBytes(StandardCharsets.UTF_8)))
        .inNamespace(namespace).createOrReplace();
    return KubeCluster.token(admin, namespace, KubeCluster.SA_NAME);
  }

  private static String freshNamespace(String what) {
    return "rbac-" + what + "-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0xffff));
  }

  private ElectionRunner start(KubernetesClient client, String namespace) {
    return ElectionRunner.builder()
        .client(client)
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("sa").namespace(namespace).leaseName(KubeCluster.SA_NAME).build())
        .service(log.service("sa"))
        .start();
  }

  @Test
  void theServiceAccountTheBuildScriptBoundWithDocsRbacYamlLeads() throws Exception {
    Config config = Config.fromKubeconfig(CLUSTER.serviceAccountKubeconfig().toFile());
    assertThat(config.getNamespace()).isEqualTo(KubeCluster.SA_NAMESPACE);
    try (KubernetesClient client = KubeCluster.client(config);
        ElectionRunner runner = ElectionRunner.builder()
            .client(client)
            .decision(MockApi.CONTEND)
            // No namespace set: the adapter takes the client's, the service account's kubeconfig context.
            .settings(LeaseSettings.builder().leaseName(KubeCluster.SA_NAME).identity("sa")
                .leaseDuration(MockApi.LEASE_DURATION).renewDeadline(MockApi.RENEW_DEADLINE)
                .retryPeriod(MockApi.RETRY_PERIOD).lossPolicy(LossPolicy.recontend()).build())
            .service(log.service("sa"))
            .start()) {
      assertThat(Replica.awaitTrue(() -> runner.state().kind() == ElectionState.Kind.LEADING,
          Duration.ofSeconds(20))).as("state %s, startup failure %s", runner.state(), runner.startupFailure())
          .isTrue();
      assertThat(runner.namespace()).hasValue(KubeCluster.SA_NAMESPACE);
      assertThat(runner.startupFailure()).isEmpty();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"get", "create", "update"})
  void withoutARequiredVerbThePreflightFailsNamingItAndExplainSaysDenied(String verb) throws Exception {
    String namespace = freshNamespace("no-" + verb);
    String token = applyManifest(namespace, verb);
    try (KubernetesClient client = KubeCluster.client(CLUSTER.configWithToken(token, namespace));
        ElectionRunner runner = start(client, namespace)) {
      assertThat(runner.awaitStopped(Duration.ofSeconds(20))).as("the runner stops at its preflight").isTrue();
      assertThat(runner.startupFailure()).hasValueSatisfying(e -> {
        assertThat(e.missingVerbs()).containsExactly(verb);
        assertThat(e).hasMessageContaining("may not " + verb + " leases");
      });
      assertThat(runner.state()).as("stopped, and why").isEqualTo(new ElectionState.Stopped(
          ElectionState.StopCause.ACCESS_DENIED, Optional.of(runner.startupFailure().orElseThrow())));
    } finally {
      assertThat(log.entries()).as("nothing ran").isEmpty();
    }
    String explained = explain(CLUSTER.kubeconfigWithToken(dir.resolve("kubeconfig"), token, namespace), namespace);
    assertThat(explained)
        .contains("rbac:        DENIED: may not " + verb + " leases (coordination.k8s.io) in namespace \""
            + namespace + "\"; the adapter would refuse to start")
        .contains("kind: Role");
    admin.namespaces().withName(namespace).delete();
  }

  @Test
  void withoutWatchItLeadsAndSaysWhatThatCosts() throws Exception {
    String namespace = freshNamespace("no-watch");
    String token = applyManifest(namespace, "watch");
    try (LogCapture logs = new LogCapture();
        KubernetesClient client = KubeCluster.client(CLUSTER.configWithToken(token, namespace));
        ElectionRunner runner = start(client, namespace)) {
      assertThat(Replica.awaitTrue(() -> runner.state().kind() == ElectionState.Kind.LEADING,
          Duration.ofSeconds(20))).isTrue();
      // The watch review is asked once the first attempt is over, off the start path: its warning may come after
      // the take.
      assertThat(Replica.awaitTrue(
          () -> logs.text().contains("may not watch leases in namespace \"" + namespace + "\""),
          Duration.ofSeconds(20))).as("the watch warning, in %s", logs.text()).isTrue();
      assertThat(logs.text()).contains("a graceful hand-over takes up to one retry period");
    }
    String explained = explain(CLUSTER.kubeconfigWithToken(dir.resolve("kubeconfig"), token, namespace), namespace);
    assertThat(explained).contains("rbac:        granted: get, create, update")
        .contains("watch is not, so followers notice a released Lease only at their next poll");
    admin.namespaces().withName(namespace).delete();
  }

  @Test
  void explainSaysGrantedForTheBoundServiceAccountAndForTheAdmin() {
    assertThat(explain(CLUSTER.serviceAccountKubeconfig(), KubeCluster.SA_NAMESPACE))
        .contains("rbac:        granted: get, create, update on leases (coordination.k8s.io) in namespace \""
            + KubeCluster.SA_NAMESPACE + "\"\n")
        .doesNotContain("watch is not");
    assertThat(explain(CLUSTER.adminKubeconfig(), "default"))
        .contains("rbac:        granted: get, create, update on leases (coordination.k8s.io) in namespace "
            + "\"default\"\n");
  }

  @Test
  void aUserWithNoGrantsIsDeniedEveryVerbByThePreflightAndByExplain() throws Exception {
    try (KubernetesClient client = KubeCluster.client(Config.fromKubeconfig(CLUSTER.nobodyKubeconfig().toFile()));
        ElectionRunner runner = start(client, "default")) {
      assertThat(runner.awaitStopped(Duration.ofSeconds(20))).isTrue();
      assertThat(runner.startupFailure()).hasValueSatisfying(
          e -> assertThat(e.missingVerbs()).containsExactlyInAnyOrder("get", "create", "update"));
      assertThat(runner.state()).isInstanceOfSatisfying(ElectionState.Stopped.class,
          stopped -> assertThat(stopped.cause()).isEqualTo(ElectionState.StopCause.ACCESS_DENIED));
    }
    assertThat(explain(CLUSTER.nobodyKubeconfig(), "default"))
        .contains("rbac:        DENIED: may not get, create, update leases")
        .contains("kind: Role");
  }

  /**
   * The preflight takes an allow from a rules review's list: on this server (RBAC only) the listed rules must allow
   * exactly what its own access reviews allow, for the Lease and another Lease of the namespace, and for Events,
   * under the documented Role, under it with each verb taken out, and for the admin and the user with no grants.
   */
  @ParameterizedTest
  @ValueSource(strings = {"", "get", "create", "update", "watch", "admin", "nobody"})
  void theListedRulesAllowExactlyWhatTheAccessReviewsAllow(String who) throws Exception {
    boolean fixed = who.equals("admin") || who.equals("nobody");
    String namespace = fixed ? "default" : freshNamespace(who.isEmpty() ? "all" : "rules-" + who);
    KubernetesClient client = who.equals("admin") ? CLUSTER.admin()
        : who.equals("nobody") ? KubeCluster.client(Config.fromKubeconfig(CLUSTER.nobodyKubeconfig().toFile()))
        : KubeCluster.client(CLUSTER.configWithToken(applyManifest(namespace, who.isEmpty() ? null : who), namespace));
    try (client) {
      // The preflight's own question, sent and read raw; fabric8's typed model of the same review reads the same.
      LeaseRules rules = RbacPreflight.rules(client, namespace, () -> false).orElseThrow();
      assertThat(rules.rules()).as("raw against typed (the server lists the rules in no fixed order)")
          .containsExactlyInAnyOrderElementsOf(LeaseRules.of(client.authorization().v1().selfSubjectRulesReview()
              .create(LeaseRules.question(namespace))).rules());
      int allowed = 0;
      for (String lease : java.util.List.of(KubeCluster.SA_NAME, "another-lease")) {
        for (String verb : java.util.List.of("get", "create", "update", "watch")) {
          boolean reviewed = Boolean.TRUE.equals(client.authorization().v1().selfSubjectAccessReview()
              .create(LeaseAccess.question(namespace, lease, verb)).getStatus().getAllowed());
          assertThat(rules.allowsOnLease(verb, lease)).as("%s on %s, %s", verb, lease, rules).isEqualTo(reviewed);
          allowed += reviewed ? 1 : 0;
        }
      }
      boolean events = Boolean.TRUE.equals(client.authorization().v1().selfSubjectAccessReview()
          .create(new EventAccess(namespace, KubeCluster.SA_NAME).question()).getStatus().getAllowed());
      assertThat(rules.allowsEvents()).as("create events, %s", rules).isEqualTo(events);
      assertThat(allowed).as("the cases differ").isEqualTo(switch (who) {
        case "admin" -> 8;
        case "nobody" -> 0;
        case "" -> 5; // create on any Lease; get, update and watch on this one only
        case "create" -> 3;
        default -> 4;
      });
    } finally {
      if (!fixed) {
        admin.namespaces().withName(namespace).delete();
      }
    }
  }

  private static String explain(Path kubeconfig, String namespace) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = ExplainCluster.run(new String[] {"--substrate", "kubernetes", "--uses-kubernetes-api",
        "--lease-name", KubeCluster.SA_NAME, "--namespace", namespace, "--kubeconfig", kubeconfig.toString()},
        Environment.of(Map.of()), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    String text = out.toString(StandardCharsets.UTF_8);
    assertThat(status).as("explain-cluster exit status; stderr: %s; stdout: %s",
        err.toString(StandardCharsets.UTF_8), text).isEqualTo(ExplainCluster.EXIT_DECIDED);
    return text;
  }
}
