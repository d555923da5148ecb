package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.LogCapture;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The leadership Events on the real server (Kubernetes 1.20's core/v1 Events, its validation and its RBAC):
 * after a hand-over and a crash the Events of every holder are there, in order, on the Lease; as a service
 * account bound by {@code docs/deploy/rbac.yaml} the runner records them; with the Role's events rule taken out
 * the election is unaffected and each runner logs one WARN naming the missing verb.
 */
class LeadershipEventsIT {

  private static final KubeCluster CLUSTER = KubeCluster.fromSystemProperties();
  private static final String LEASE = MockApi.LEASE;
  private static final Duration PATIENCE = Duration.ofSeconds(30);
  private static final String EVENTS_RULE = "  - apiGroups: [\"\"]\n    resources: [\"events\"]\n"
      + "    verbs: [\"create\"]\n";
  private static KubernetesClient admin;

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();
  private final ServiceLog log = new ServiceLog();

  @BeforeAll
  static void connect() {
    admin = CLUSTER.admin();
  }

  @AfterAll
  static void disconnect() {
    admin.close();
  }

  /** Timings a little slower than the fixture's, so a loaded machine adds no spurious loss (and Event). */
  private static LeaseSettings.Builder settings(String identity, String namespace, String lease) {
    return MockApi.fastSettings(identity).namespace(namespace).leaseName(lease)
        .leaseDuration(Duration.ofSeconds(4)).renewDeadline(Duration.ofSeconds(3)).retryPeriod(Duration.ofMillis(500));
  }

  /** The leadership Events of a Lease, as {@code kubectl get events --field-selector involvedObject.name=} finds them. */
  private static List<Event> events(String namespace, String lease) {
    return admin.v1().events().inNamespace(namespace).withField("involvedObject.name", lease).list().getItems()
        .stream().filter(event -> "LeaderElection".equals(event.getReason()))
        .sorted(Comparator.comparing(event -> event.getMetadata().getName()))
        .toList();
  }

  private static List<String> messages(String namespace, String lease) {
    return events(namespace, lease).stream().map(Event::getMessage).toList();
  }

  private static int token(Replica replica) {
    return ((ElectionState.Leading) replica.runner.state()).term().leaseTransitions();
  }

  @Test
  void afterAHandOverAndACrashTheEventsOfEveryHolderAreOnTheLeaseInOrder() throws Exception {
    String namespace = api.namespace();
    Replica a = Replica.start("a", api.replica("a").client(), settings("a", namespace, LEASE).build(), log);
    try {
      assertThat(Replica.awaitTrue(a::leads, PATIENCE)).isTrue();
      int first = token(a);
      try (Replica b = Replica.start("b", api.replica("b").client(), settings("b", namespace, LEASE).build(), log)) {
        assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
            PATIENCE)).isTrue();
        a.close();                                   // a hand-over: a releases, b takes the free Lease at once
        assertThat(Replica.awaitTrue(b::leads, PATIENCE)).isTrue();
        int second = token(b);
        try (Replica c = Replica.start("c", api.replica("c").client(), settings("c", namespace, LEASE).build(),
            log)) {
          assertThat(Replica.awaitTrue(() -> c.runner.state().equals(
              new ElectionState.Following(Optional.of("b"))), PATIENCE)).isTrue();
          RunnerHooks.crash(b.runner);               // a crash: b writes nothing more; c takes over on expiry
          log.crashed("b");
          assertThat(Replica.awaitTrue(c::leads, PATIENCE)).isTrue();
          int third = token(c);
          assertThat(Replica.awaitTrue(() -> events(namespace, LEASE).size() >= 4, PATIENCE))
              .as("%s", messages(namespace, LEASE)).isTrue();

          assertThat(messages(namespace, LEASE)).containsExactly(
              "a became leader (fencing token " + first + ")",
              "a stopped leading (fencing token " + first + "): released the Lease",
              "b became leader (fencing token " + second + ")",
              "c became leader (fencing token " + third + "; previous holder b)");
          String uid = api.lease(LEASE).orElseThrow().getMetadata().getUid();
          assertThat(events(namespace, LEASE)).allSatisfy(event -> {
            assertThat(event.getMetadata().getName()).matches(Pattern.quote(LEASE) + "\\.[0-9a-f]{16}");
            assertThat(event.getType()).isEqualTo("Normal");
            assertThat(event.getInvolvedObject().getKind()).isEqualTo("Lease");
            assertThat(event.getInvolvedObject().getApiVersion()).isEqualTo("coordination.k8s.io/v1");
            assertThat(event.getInvolvedObject().getUid()).as("kubectl describe lease finds it").isEqualTo(uid);
            assertThat(event.getSource().getComponent()).isEqualTo(event.getReportingInstance());
            assertThat(event.getMessage()).startsWith(event.getSource().getComponent() + " ");
            assertThat(event.getReportingComponent()).isEqualTo("election-policy");
            assertThat(event.getCount()).isEqualTo(1);
          });
          assertThat(log.overlap()).isEmpty();
        }
      }
    } finally {
      a.close();
    }
  }

  /**
   * docs/deploy/rbac.yaml in a fresh namespace, its events rule taken out when {@code withEvents} is false;
   * returns a client of its service account.
   */
  private static KubernetesClient serviceAccount(String namespace, boolean withEvents) throws Exception {
    String manifest = Files.readString(CLUSTER.repo().resolve("docs/deploy/rbac.yaml"))
        .replace("namespace: orders", "namespace: " + namespace);
    assertThat(manifest).contains(EVENTS_RULE);
    if (!withEvents) {
      manifest = manifest.replace(EVENTS_RULE, "");
    }
    KubeCluster.createNamespace(admin, namespace);
    admin.load(new ByteArrayInputStream(manifest.getBytes(StandardCharsets.UTF_8))).inNamespace(namespace)
        .createOrReplace();
    String token = KubeCluster.token(admin, namespace, KubeCluster.SA_NAME);
    return KubeCluster.client(CLUSTER.configWithToken(token, namespace));
  }

  private static int count(String text, String part) {
    Matcher matcher = Pattern.compile(Pattern.quote(part)).matcher(text);
    int count = 0;
    while (matcher.find()) {
      count++;
    }
    return count;
  }

  /** a leads, b follows, a closes and b takes over: the course both RBAC tests run as the service account. */
  private void handOver(String namespace, KubernetesClient clientA, KubernetesClient clientB) throws Exception {
    Replica a = Replica.start("sa-a", clientA, settings("sa-a", namespace, KubeCluster.SA_NAME).build(), log);
    try {
      assertThat(Replica.awaitTrue(a::leads, PATIENCE)).as("%s %s", a.runner.state(), a.runner.startupFailure())
          .isTrue();
      try (Replica b = Replica.start("sa-b", clientB, settings("sa-b", namespace, KubeCluster.SA_NAME).build(),
          log)) {
        assertThat(Replica.awaitTrue(() -> b.runner.state().kind() == ElectionState.Kind.FOLLOWING, PATIENCE))
            .isTrue();
        a.close();
        assertThat(Replica.awaitTrue(b::leads, PATIENCE)).as("the hand-over").isTrue();
        assertThat(b.runner.startupFailure()).isEmpty();
      }
    } finally {
      a.close();
    }
    assertThat(log.overlap()).isEmpty();
  }

  @Test
  void theServiceAccountOfTheManifestRecordsItsEventsWithoutAWarning() throws Exception {
    String namespace = "events-granted-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0xffff));
    try (LogCapture logs = new LogCapture();
        KubernetesClient clientA = serviceAccount(namespace, true);
        KubernetesClient clientB = KubeCluster.client(clientA.getConfiguration())) {
      handOver(namespace, clientA, clientB);
      assertThat(Replica.awaitTrue(() -> events(namespace, KubeCluster.SA_NAME).size() >= 4, PATIENCE))
          .as("%s", messages(namespace, KubeCluster.SA_NAME)).isTrue();

      assertThat(messages(namespace, KubeCluster.SA_NAME)).hasSize(4).satisfies(messages -> {
        assertThat(messages.get(0)).startsWith("sa-a became leader");
        assertThat(messages.get(1)).startsWith("sa-a stopped leading").endsWith("released the Lease");
        assertThat(messages.get(2)).startsWith("sa-b became leader");
        assertThat(messages.get(3)).startsWith("sa-b stopped leading");
      });
      assertThat(logs.text()).doesNotContain("may not create events");
    } finally {
      admin.namespaces().withName(namespace).delete();
    }
  }

  @Test
  void withCreateOnEventsDeniedTheElectionIsUnaffectedAndEachRunnerWarnsOnceNamingTheVerb() throws Exception {
    String namespace = "events-denied-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0xffff));
    try (LogCapture logs = new LogCapture();
        KubernetesClient clientA = serviceAccount(namespace, false);
        KubernetesClient clientB = KubeCluster.client(clientA.getConfiguration())) {
      handOver(namespace, clientA, clientB);
      // Must wait: the refused writes of the last Events are answered after the hand-over, and the check is that
      // none of them warns again; the real server counts no posts for a test, so nothing marks their answers.
      Thread.sleep(1000);

      String text = logs.text();
      assertThat(count(text, "may not create events in namespace \"" + namespace + "\"")).as(text).isEqualTo(2);
      // The preflight's rules review decides here (the Role lists its rules) and does not show create on events,
      // so each runner's first Event write finds the denial: one WARN each, with the rule to add.
      assertThat(text).contains("the server refused to create the Event")
          .contains("verbs: [\"create\"]").contains("resources: [\"events\"]")
          .doesNotContain("the RBAC preflight found create on events denied");
      assertThat(events(namespace, KubeCluster.SA_NAME)).as("the server refused every one").isEmpty();
    } finally {
      admin.namespaces().withName(namespace).delete();
    }
  }
}
