package io.github.electionpolicy.fabric8;

import static io.github.electionpolicy.fabric8.LeaseContest.create;
import static io.github.electionpolicy.fabric8.LeaseContest.http;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.testsupport.LogCapture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The bad-input catalogue of issue 6: every kind of bad input a user, an operator or another writer of the
 * Lease can feed the adapter through its public API, one named case each. Bad configuration must fail at
 * start-up with a message that names the setting, the value, the accepted values and the fix; bad data
 * found at run time (a Lease someone else wrote) must be handled safely and logged: exactly one replica
 * leads, nobody runs while another may, and nothing is lost.
 */
class BadInputCatalogueTest {

  private static final Substrate KUBERNETES = Substrate.usingKubernetesApi("kubernetes");
  private static final Environment POD = Environment.of(Map.of("POD_NAME", "orders-0"));
  private static final String LEASE_PATH = "apis/coordination.k8s.io/v1/namespaces/" + MockApi.NAMESPACE + "/leases";

  // ---- configuration: a clear error at start-up ------------------------------------------------------

  @TestFactory
  Stream<DynamicTest> badConfigurationFailsAtStartUpNamingSettingValueAcceptedValuesAndFix() {
    return Stream.of(
        rejected("kill switch set to a word that is neither on nor off", "LEADER_ELECTION_ENABLED", "maybe",
            () -> decide(Map.of("LEADER_ELECTION_ENABLED", "maybe"))),
        rejected("kill switch set to a plausible typo", "LEADER_ELECTION_ENABLED", "enabeld",
            () -> decide(Map.of("LEADER_ELECTION_ENABLED", "enabeld"))),
        rejected("kill switch hiding a non-breaking space", "LEADER_ELECTION_ENABLED", "false\u00a0",
            () -> decide(Map.of("LEADER_ELECTION_ENABLED", "false\u00a0"))),
        rejected("kill-switch variable named with a dash", "killSwitchVariable", "LEADER-ELECTION",
            () -> ElectionPolicy.builder().killSwitchVariable("LEADER-ELECTION")),
        rejected("blank substrate name", "substrate name", " ", () -> Substrate.of(" ", true)),
        rejected("missing lease name", "leaseName", null,
            () -> LeaseSettings.builder().environment(POD).build()),
        rejected("empty lease name", "leaseName", "", () -> settings(b -> b.leaseName(""))),
        rejected("blank lease name", "leaseName", "   ", () -> settings(b -> b.leaseName("   "))),
        rejected("lease name with capitals and an underscore", "leaseName", "Orders_Controller",
            () -> settings(b -> b.leaseName("Orders_Controller"))),
        rejected("namespace that is not a DNS-1123 label", "namespace", "Shop_Prod",
            () -> settings(b -> b.namespace("Shop_Prod"))),
        rejected("namespace with a dot (a subdomain, not a label)", "namespace", "shop.eu",
            () -> settings(b -> b.namespace("shop.eu"))),
        rejected("namespace of 64 characters", "namespace", "n".repeat(64),
            () -> settings(b -> b.namespace("n".repeat(64)))),
        rejected("empty namespace", "namespace", "", () -> settings(b -> b.namespace(""))),
        rejected("blank explicit identity", "identity", "  ", () -> settings(b -> b.identity("  "))),
        rejected("renew deadline equal to the lease duration", "renewDeadline", "15s",
            () -> settings(b -> b.renewDeadline(Duration.ofSeconds(15)))),
        rejected("renew deadline longer than the lease duration", "renewDeadline", "20s",
            () -> settings(b -> b.renewDeadline(Duration.ofSeconds(20)))),
        rejected("retry period × 1.2 equal to the renew deadline", "retryPeriod", "1s",
            () -> settings(b -> b.leaseDuration(Duration.ofSeconds(2)).renewDeadline(Duration.ofMillis(1200))
                .retryPeriod(Duration.ofSeconds(1)))),
        rejected("retry period longer than the renew deadline", "retryPeriod", "12s",
            () -> settings(b -> b.retryPeriod(Duration.ofSeconds(12)))),
        rejected("lease duration not in whole seconds", "leaseDuration", "1.5s",
            () -> settings(b -> b.leaseDuration(Duration.ofMillis(1500)))),
        rejected("lease duration below one second", "leaseDuration", "999ms",
            () -> settings(b -> b.leaseDuration(Duration.ofMillis(999)))),
        rejected("zero lease duration", "leaseDuration", "PT0S",
            () -> settings(b -> b.leaseDuration(Duration.ZERO))),
        rejected("negative lease duration", "leaseDuration", "PT-15S",
            () -> settings(b -> b.leaseDuration(Duration.ofSeconds(-15)))),
        rejected("lease duration too long for the Lease's int32 seconds", "leaseDuration",
            Duration.ofSeconds(Integer.MAX_VALUE + 1L).toString(),
            () -> settings(b -> b.leaseDuration(Duration.ofSeconds(Integer.MAX_VALUE + 1L)))),
        rejected("zero renew deadline", "renewDeadline", "PT0S",
            () -> settings(b -> b.renewDeadline(Duration.ZERO))),
        rejected("negative renew deadline", "renewDeadline", "PT-10S",
            () -> settings(b -> b.renewDeadline(Duration.ofSeconds(-10)))),
        rejected("zero retry period", "retryPeriod", "PT0S", () -> settings(b -> b.retryPeriod(Duration.ZERO))),
        rejected("negative retry period", "retryPeriod", "PT-2S",
            () -> settings(b -> b.retryPeriod(Duration.ofSeconds(-2)))),
        rejected("negative stop timeout", "stopTimeout", "PT-1S",
            () -> settings(b -> b.stopTimeout(Duration.ofSeconds(-1)))),
        rejected("request timeout below the minimum", "requestTimeout", "50ms",
            () -> settings(b -> b.requestTimeout(Duration.ofMillis(50)))),
        rejected("liveness budget shorter than the renew deadline", "healthBudget", "1s",
            () -> settings(b -> b.healthBudget(Duration.ofSeconds(1)))),
        rejected("garbage in the service-account namespace file", "namespace", "Not A Namespace!",
            () -> startWithNamespaceFile("Not A Namespace!\n")),
        rejected("client configured with an invalid namespace and none set", "namespace", "Team_Orders",
            BadInputCatalogueTest::startWithClientNamespace))
        .map(c -> dynamicTest(c.name(), () -> assertRejected(c)));
  }

  @TestFactory
  Stream<DynamicTest> missingOrNullInputsFailAtStartUpNamingTheInput() {
    return Stream.of(
        failsWith("null client", NullPointerException.class, "client",
            () -> ElectionRunner.builder().client(null)),
        failsWith("null decision", NullPointerException.class, "decision",
            () -> ElectionRunner.builder().decision(null)),
        failsWith("null service", NullPointerException.class, "service",
            () -> ElectionRunner.builder().service(null)),
        failsWith("null lease name", NullPointerException.class, "leaseName",
            () -> LeaseSettings.builder().leaseName(null)),
        failsWith("null lease duration", NullPointerException.class, "leaseDuration",
            () -> LeaseSettings.builder().leaseDuration(null)),
        failsWith("null renew deadline", NullPointerException.class, "renewDeadline",
            () -> LeaseSettings.builder().renewDeadline(null)),
        failsWith("null retry period", NullPointerException.class, "retryPeriod",
            () -> LeaseSettings.builder().retryPeriod(null)),
        failsWith("null loss policy", NullPointerException.class, "lossPolicy",
            () -> LeaseSettings.builder().lossPolicy(null)),
        failsWith("null environment for the identity", NullPointerException.class, "environment",
            () -> LeaseSettings.builder().environment(null)),
        failsWith("null environment for the decision", NullPointerException.class, "Environment.system()",
            () -> ElectionRunner.builder().decide(ElectionPolicy.defaults(), null, KUBERNETES)),
        failsWith("no service at all", IllegalStateException.class, "service(...)",
            () -> ElectionRunner.builder().decision(MockApi.CONTEND).settings(settings(b -> b)).start()),
        failsWith("contending without settings", IllegalStateException.class, "settings(LeaseSettings",
            () -> ElectionRunner.builder().decision(MockApi.CONTEND).service(noWork()).start()),
        failsWith("contending without a client", IllegalStateException.class, "client(kubernetesClient)",
            () -> ElectionRunner.builder().decision(MockApi.CONTEND).settings(settings(b -> b))
                .service(noWork()).start()))
        .map(c -> dynamicTest(c.name(), () -> assertThatThrownBy(c.attempt())
            .isInstanceOf(c.type()).hasMessageContaining(c.fragment())));
  }

  // ---- the environment at run time: safe and logged ---------------------------------------------------

  @TestFactory
  Stream<DynamicTest> halfSetPodEnvironmentIsWarnedAboutAndDecidedSafely() {
    return Stream.of(
        dynamicTest("KUBERNETES_SERVICE_HOST set, KUBERNETES_SERVICE_PORT unset", () -> warnsAboutHalfSetPod(
            Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1"), "KUBERNETES_SERVICE_PORT is not set")),
        dynamicTest("KUBERNETES_SERVICE_PORT blank", () -> warnsAboutHalfSetPod(
            Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "  "),
            "KUBERNETES_SERVICE_PORT is blank")));
  }

  /**
   * A half-set pod environment is not a pod; with a substrate that uses the Kubernetes API the process still
   * contends (so nothing runs twice), and the decision log warns, naming the variable.
   */
  private static void warnsAboutHalfSetPod(Map<String, String> variables, String warning) {
    ElectionDecision decision = ElectionPolicy.defaults().decide(Environment.of(variables), KUBERNETES);
    String logged;
    try (LogCapture logs = new LogCapture()) {
      io.github.electionpolicy.DecisionLog.log(decision);
      logged = logs.text();
    }

    assertThat(decision.outcome()).isEqualTo(ElectionDecision.Outcome.CONTEND);
    assertThat(decision.warnings()).singleElement().asString().contains(warning);
    assertThat(logged).contains("WARN").contains(warning);
  }

  // ---- a Lease someone else wrote: safe, logged, exactly one leader -----------------------------------

  @TestFactory
  Stream<DynamicTest> garbageLeaseWrittenBySomeoneElseIsHandledSafely() {
    return Stream.of(
        dynamicTest("negative leaseDurationSeconds: waits its own lease duration, not zero",
            () -> takenOverAfterOwnLeaseDuration(spec -> spec.withLeaseDurationSeconds(-5))),
        dynamicTest("zero leaseDurationSeconds: waits its own lease duration, not zero",
            () -> takenOverAfterOwnLeaseDuration(spec -> spec.withLeaseDurationSeconds(0))),
        dynamicTest("leaseDurationSeconds missing: waits its own lease duration",
            () -> takenOverAfterOwnLeaseDuration(spec -> spec.withLeaseDurationSeconds(null))),
        dynamicTest("renewTime and acquireTime missing: judged on the follower's own clock",
            () -> takenOverAfterOwnLeaseDuration(spec -> spec.withRenewTime(null).withAcquireTime(null))),
        dynamicTest("renewTime a century in the future: judged on the follower's own clock",
            () -> takenOverAfterOwnLeaseDuration(spec -> spec.withRenewTime(ZonedDateTime.now().plusYears(100)))),
        dynamicTest("negative leaseTransitions (only a mock server stores it): taken over after expiry",
            () -> takenOverAfterOwnLeaseDuration(spec -> spec.withLeaseTransitions(-7))),
        dynamicTest("null holder with every other field set: free, taken at once",
            () -> takenAtOnce(lease("ghost", spec -> spec.withHolderIdentity(null)))),
        dynamicTest("blank holder: free, taken at once",
            () -> takenAtOnce(lease("ghost", spec -> spec.withHolderIdentity("   ")))),
        dynamicTest("no spec at all: free, taken at once",
            () -> takenAtOnce(new LeaseBuilder(lease("ghost", spec -> spec)).withSpec(null).build())),
        dynamicTest("absurd leaseDurationSeconds (int32 max): the holder's promise is kept 1000 days on",
            BadInputCatalogueTest::absurdLeaseDurationIsHonoured),
        dynamicTest("kind ConfigMap stored at the v1 Lease path: read as a Lease held by its holder",
            BadInputCatalogueTest::objectWhoseKindDisagreesWithItsPathIsTreatedAsAHeldLease),
        dynamicTest("two replicas given the same explicit identity: never both run",
            BadInputCatalogueTest::replicasSharingAnIdentityNeverBothRun),
        dynamicTest("a coordination.k8s.io/v1beta1 Lease of the same name: not the v1 Lease, one leader on v1",
            BadInputCatalogueTest::leaseInAnotherApiVersionIsNotMistakenForTheV1Lease));
  }

  /** A Lease held by "ghost", renewed just now, as a replica of another build might have written it. */
  private static Lease lease(String holder, UnaryOperator<io.fabric8.kubernetes.api.model.coordination.v1
      .LeaseSpecBuilder> garbage) {
    ZonedDateTime now = ZonedDateTime.now();
    return new LeaseBuilder()
        .withNewMetadata().withName(MockApi.LEASE).withNamespace(MockApi.NAMESPACE).endMetadata()
        .withSpec(garbage.apply(new io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpecBuilder()
            .withHolderIdentity(holder).withLeaseDurationSeconds(2).withAcquireTime(now).withRenewTime(now)
            .withLeaseTransitions(3)).build())
        .build();
  }

  private static void takenOverAfterOwnLeaseDuration(
      UnaryOperator<io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpecBuilder> garbage) throws Exception {
    LeaseContest contest = LeaseContest.against(api -> create(api, lease("ghost", garbage)),
        Duration.ofSeconds(5));

    assertThat(contest.firstStartAfter()).hasValueSatisfying(took -> assertThat(took)
        .isGreaterThanOrEqualTo(MockApi.LEASE_DURATION)
        .isLessThan(MockApi.LEASE_DURATION.plus(MockApi.RETRY_PERIOD.multipliedBy(2)).plusSeconds(1)));
    contest.assertExactlyOneLeaderFollowedByTheOther();
    assertThat(contest.logs()).contains("(previous holder: ghost");
  }

  private static void takenAtOnce(Lease garbage) throws Exception {
    LeaseContest contest = LeaseContest.against(api -> create(api, garbage), Duration.ofSeconds(3));

    assertThat(contest.firstStartAfter())
        .hasValueSatisfying(took -> assertThat(took).isLessThan(Duration.ofSeconds(1)));
    contest.assertExactlyOneLeaderFollowedByTheOther();
    assertThat(contest.logs()).contains("Acquired Lease " + MockApi.NAMESPACE + "/" + MockApi.LEASE);
  }

  private static void absurdLeaseDurationIsHonoured() throws Exception {
    LeaseContest contest = LeaseContest.against(
        api -> create(api, lease("ghost", spec -> spec.withLeaseDurationSeconds(Integer.MAX_VALUE))),
        MockApi.LEASE_DURATION.plusSeconds(1), Duration.ofDays(1000));

    assertThat(contest.firstStartAfter()).isEmpty();
    assertThat(contest.states()).containsOnly(new ElectionState.Following(Optional.of("ghost")));
    assertThat(contest.ready()).containsOnly(true);
    assertThat(contest.finalLease().getSpec().getHolderIdentity()).isEqualTo("ghost");
    assertThat(contest.logs()).contains("Following leader ghost");
  }

  /**
   * The mock API server keeps each API version of a kind apart (a real API server stores one Lease and
   * serves it in every version, which makes a v1beta1 Lease just a Lease: the cases above). So the most the
   * mock can express is a v1beta1 object of the same name beside the v1 one; the adapter must neither read
   * it as its Lease nor touch it.
   */
  private static void leaseInAnotherApiVersionIsNotMistakenForTheV1Lease() throws Exception {
    String v1beta1 = "apis/coordination.k8s.io/v1beta1/namespaces/" + MockApi.NAMESPACE + "/leases";
    String body = "{\"apiVersion\":\"coordination.k8s.io/v1beta1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\""
        + MockApi.LEASE + "\",\"namespace\":\"" + MockApi.NAMESPACE + "\"},\"spec\":{\"holderIdentity\":"
        + "\"legacy-controller\",\"leaseDurationSeconds\":3600}}";
    LeaseContest contest = LeaseContest.against(
        api -> assertThat(http(api, "POST", v1beta1, body)).startsWith("201"),
        Duration.ofSeconds(3));

    assertThat(contest.firstStartAfter())
        .hasValueSatisfying(took -> assertThat(took).isLessThan(Duration.ofSeconds(1)));
    contest.assertExactlyOneLeaderFollowedByTheOther();
    assertThat(contest.leftBehind()).contains("\"holderIdentity\":\"legacy-controller\"");
  }

  /**
   * A real API server stores only Leases at the Lease path; the mock stores whatever it is sent, so an object
   * whose kind disagrees with its path can be planted. The typed client reads it as a Lease; the adapter
   * treats its holder like any other and takes over only after its own lease duration.
   */
  private static void objectWhoseKindDisagreesWithItsPathIsTreatedAsAHeldLease() throws Exception {
    String body = "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\""
        + MockApi.LEASE + "\",\"namespace\":\"" + MockApi.NAMESPACE + "\"},\"spec\":{\"holderIdentity\":"
        + "\"impostor\",\"leaseDurationSeconds\":2}}";
    LeaseContest contest = LeaseContest.against(
        api -> assertThat(http(api, "POST", LEASE_PATH, body)).startsWith("201"),
        Duration.ofSeconds(5));

    assertThat(contest.firstStartAfter()).hasValueSatisfying(took -> assertThat(took)
        .isGreaterThanOrEqualTo(MockApi.LEASE_DURATION));
    contest.assertExactlyOneLeaderFollowedByTheOther();
    assertThat(contest.logs()).contains("(previous holder: impostor");
  }

  /**
   * Two replicas configured with the same explicit identity each see the other's Lease as their own. The
   * second must not take it over at once as if it had written it, and a leader whose Lease was taken under
   * its own identity by another term must stop; either way the mistake is logged as an error.
   */
  private static void replicasSharingAnIdentityNeverBothRun() throws Exception {
    try (MockApi api = new MockApi().answeringAccessReviews(); LogCapture logs = new LogCapture()) {
      ServiceLog log = new ServiceLog();
      try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("orders").build(), log)) {
        assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(3))).isTrue();
        try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("orders").build(), log)) {
          // A lease duration and a renew deadline of the holder's retry periods: b had that long to (wrongly)
          // take the Lease under the same identity, or start its services.
          int renewals = (int) (MockApi.LEASE_DURATION.plus(MockApi.RENEW_DEADLINE).toMillis()
              / MockApi.RETRY_PERIOD.toMillis());
          assertThat(api.awaitWrites("orders", renewals)).as("the holder renews").isTrue();

          assertThat(log.overlap()).isEmpty();
          assertThat(log.running()).containsExactly("a");
          assertThat(b.runner.state()).isEqualTo(new ElectionState.Following(Optional.of("orders")));
          assertThat(logs.text()).contains("ERROR").contains("Identities must be unique among replicas");
        }
      }
    }
  }

  // ---- fixtures ---------------------------------------------------------------------------------------

  private record StartUpCase(String name, String setting, String value, ThrowingCallable attempt) {}

  private record MissingInput(String name, Class<? extends Throwable> type, String fragment,
      ThrowingCallable attempt) {}

  private static StartUpCase rejected(String name, String setting, String value, ThrowingCallable attempt) {
    return new StartUpCase(name, setting, value, attempt);
  }

  private static MissingInput failsWith(String name, Class<? extends Throwable> type, String fragment,
      ThrowingCallable attempt) {
    return new MissingInput(name, type, fragment, attempt);
  }

  private static void assertRejected(StartUpCase c) {
    assertThatThrownBy(c.attempt())
        .isInstanceOfSatisfying(InvalidElectionSettingException.class, e -> {
          assertThat(e.setting()).isEqualTo(c.setting());
          assertThat(e.value()).isEqualTo(c.value());
        })
        .hasMessageStartingWith(c.setting() + "=")
        .hasMessageContaining(" is not valid: accepted values are ")
        .hasMessageContaining("; fix: ");
  }

  private static ElectionDecision decide(Map<String, String> variables) {
    Map<String, String> pod = new HashMap<>(variables);
    pod.put("KUBERNETES_SERVICE_HOST", "10.0.0.1");
    pod.put("KUBERNETES_SERVICE_PORT", "443");
    return ElectionPolicy.defaults().decide(Environment.of(pod), KUBERNETES);
  }

  private static LeaseSettings settings(UnaryOperator<LeaseSettings.Builder> change) {
    return change.apply(LeaseSettings.builder().leaseName(MockApi.LEASE).environment(POD)).build();
  }

  private static LeaderService noWork() {
    return LeaderService.of(term -> { }, () -> { });
  }

  private static void startWithClientNamespace() throws Exception {
    try (MockApi api = new MockApi().answeringAccessReviews();
        KubernetesClient client = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
            .withConfig(new io.fabric8.kubernetes.client.ConfigBuilder(io.fabric8.kubernetes.client.Config.empty())
                .withMasterUrl(api.proxy().url()).withNamespace("Team_Orders").build())
            .withHttpClientFactory(new io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory()).build()) {
      ElectionRunner.builder().client(client).decision(MockApi.CONTEND)
          .settings(LeaseSettings.builder().leaseName(MockApi.LEASE).identity("a")
              .serviceAccountNamespaceFile(Path.of("target", "no-such-namespace-file")).build())
          .service(noWork()).start().close();
    }
  }

  private static void startWithNamespaceFile(String content) throws Exception {
    Path file = Files.createTempFile("namespace", "");
    try (MockApi api = new MockApi().answeringAccessReviews()) {
      Files.writeString(file, content);
      KubernetesClient client = api.client();
      ElectionRunner.builder().client(client).decision(MockApi.CONTEND)
          .settings(LeaseSettings.builder().leaseName(MockApi.LEASE).identity("a").serviceAccountNamespaceFile(file)
              .build())
          .service(noWork()).start().close();
    } finally {
      Files.deleteIfExists(file);
    }
  }
}
