package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.fabric8.Readiness;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

/**
 * Every {@code election.*} property reaches the library, and every value the library rejects fails the
 * context's start-up with the library's own message. The contexts run unelected (kill switch off), so they
 * need no API server.
 */
class ElectionPropertiesTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private static final Substrate KUBERNETES = Substrate.usingKubernetesApi("kubernetes");

  @Test
  void withOnlyALeaseNameEverySettingIsTheLibrarysDefault() {
    Contexts.election()
        .withPropertyValues("election.lease-name=orders-controller", Contexts.UNELECTED)
        .run(context -> {
          LeaseSettings settings = context.getBean(LeaseSettings.class);
          LeaseSettings library = LeaseSettings.builder().leaseName("orders-controller").build();
          assertThat(settings.leaseName()).isEqualTo("orders-controller");
          assertThat(settings.namespace()).isEmpty();
          assertThat(settings.identity()).isEmpty();
          assertThat(settings.leaseDuration()).isEqualTo(library.leaseDuration());
          assertThat(settings.renewDeadline()).isEqualTo(library.renewDeadline());
          assertThat(settings.retryPeriod()).isEqualTo(library.retryPeriod());
          assertThat(settings.requestTimeout()).isEqualTo(library.requestTimeout());
          assertThat(settings.healthBudget()).isEqualTo(library.healthBudget());
          assertThat(settings.stopTimeout()).isEqualTo(library.stopTimeout());
          assertThat(settings.lossPolicy().kind()).isEqualTo(LossPolicy.Kind.EXIT);
          assertThat(settings.serviceAccountNamespaceFile()).isEqualTo(library.serviceAccountNamespaceFile());
          assertThat(settings.leadershipEvents()).isEqualTo(library.leadershipEvents()).isTrue();

          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
          assertThat(lifecycle.getPhase()).isEqualTo(ElectionLifecycle.DEFAULT_PHASE);
          ElectionProperties properties = context.getBean(ElectionProperties.class);
          assertThat(properties.readiness()).isEqualTo(Readiness.CONNECTED);
          assertThat(properties.rbacPreflight()).isTrue();
          assertThat(properties.killSwitchVariable()).isEqualTo(ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE);
          assertThat(properties.substrate().name()).isEqualTo("kubernetes");
          assertThat(properties.substrate().usesKubernetesApi()).isTrue();
        });
  }

  @Test
  void everyLeaseSettingIsTakenFromItsProperty() {
    Contexts.election()
        .withPropertyValues(Contexts.UNELECTED,
            "election.lease-name=orders-controller",
            "election.namespace=shop",
            "election.identity=orders-1",
            "election.lease-duration=30s",
            "election.renew-deadline=20s",
            "election.retry-period=4s",
            "election.request-timeout=3s",
            "election.health-budget=1m",
            "election.stop-timeout=7s",
            "election.loss-policy=recontend",
            "election.leadership-events=false",
            "election.phase=42")
        .run(context -> {
          LeaseSettings settings = context.getBean(LeaseSettings.class);
          assertThat(settings.leaseName()).isEqualTo("orders-controller");
          assertThat(settings.namespace()).contains("shop");
          assertThat(settings.identity()).contains("orders-1");
          assertThat(settings.leaseDuration()).isEqualTo(Duration.ofSeconds(30));
          assertThat(settings.renewDeadline()).isEqualTo(Duration.ofSeconds(20));
          assertThat(settings.retryPeriod()).isEqualTo(Duration.ofSeconds(4));
          assertThat(settings.requestTimeout()).isEqualTo(Duration.ofSeconds(3));
          assertThat(settings.healthBudget()).isEqualTo(Duration.ofMinutes(1));
          assertThat(settings.stopTimeout()).isEqualTo(Duration.ofSeconds(7));
          assertThat(settings.lossPolicy()).isEqualTo(LossPolicy.recontend());
          assertThat(settings.leadershipEvents()).isFalse();
          assertThat(context.getBean(ElectionLifecycle.class).getPhase()).isEqualTo(42);
        });
  }

  @Test
  void derivedDefaultsFollowTheTimingsSet() {
    Contexts.election()
        .withPropertyValues(Contexts.UNELECTED, "election.lease-name=a", "election.lease-duration=30s",
            "election.renew-deadline=20s")
        .run(context -> {
          LeaseSettings settings = context.getBean(LeaseSettings.class);
          assertThat(settings.requestTimeout()).isEqualTo(Duration.ofSeconds(10));
          assertThat(settings.healthBudget()).isEqualTo(Duration.ofSeconds(50));
          assertThat(settings.stopTimeout()).isEqualTo(Duration.ofSeconds(10));
        });
  }

  @Test
  void anIdentitySetIsTheRunnersIdentity() {
    Contexts.election()
        .withPropertyValues(Contexts.UNELECTED, "election.lease-name=a", "election.identity=orders-7f9c")
        .run(context -> assertThat(context.getBean(ElectionLifecycle.class).runner())
            .hasValueSatisfying(runner -> assertThat(runner.identity()).isEqualTo("orders-7f9c")));
  }

  @Test
  void theDefaultIdentityIsReadThroughSpringsEnvironment() {
    Contexts.election()
        .withPropertyValues(Contexts.UNELECTED, "election.lease-name=a", "POD_NAME=orders-7f9c-x2k4q")
        .run(context -> assertThat(context.getBean(LeaseSettings.class).environment().get("POD_NAME"))
            .contains("orders-7f9c-x2k4q"));
  }

  @Test
  void readinessAcceptsSpringsRelaxedEnumSpellings() {
    Contexts.election()
        .withPropertyValues(Contexts.UNELECTED, "election.lease-name=a", "election.readiness=leader-only")
        .run(context -> assertThat(context.getBean(ElectionProperties.class).readiness())
            .isEqualTo(Readiness.LEADER_ONLY));
  }

  @Test
  void theDefaultKillSwitchOffRunsUnelected() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "LEADER_ELECTION_ENABLED=off")
        .run(context -> {
          ElectionDecision decision = context.getBean(ElectionDecision.class);
          assertThat(decision.outcome()).isEqualTo(ElectionDecision.Outcome.RUN_UNELECTED);
          assertThat(decision.reasons()).containsExactly(ElectionDecision.Reason.KILL_SWITCH_OFF);
        });
  }

  @Test
  void theKillSwitchVariableNamesTheVariableRead() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.kill-switch-variable=ORDERS_ELECTION",
            "ORDERS_ELECTION=no", "LEADER_ELECTION_ENABLED=ture")
        .run(context -> {
          ElectionDecision decision = context.getBean(ElectionDecision.class);
          assertThat(decision.outcome()).isEqualTo(ElectionDecision.Outcome.RUN_UNELECTED);
          assertThat(decision.summary()).contains("ORDERS_ELECTION");
        });
  }

  @Test
  void aSubstrateWithoutTheKubernetesApiRunsUnelectedOutsideAPod() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.substrate.name=direct",
            "election.substrate.uses-kubernetes-api=false")
        .run(context -> {
          ElectionDecision decision = context.getBean(ElectionDecision.class);
          assertThat(decision.outcome()).isEqualTo(ElectionDecision.Outcome.RUN_UNELECTED);
          assertThat(decision.reasons()).containsExactly(ElectionDecision.Reason.OUTSIDE_POD_WITHOUT_KUBERNETES_API);
          assertThat(decision.substrate()).isEqualTo(Substrate.withoutKubernetesApi("direct"));
        });
  }

  @Test
  void thePodVariablesAreReadThroughSpringsEnvironment() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.substrate.name=direct",
            "election.substrate.uses-kubernetes-api=false", "KUBERNETES_SERVICE_HOST=10.96.0.1",
            "KUBERNETES_SERVICE_PORT=443", "election.namespace=" + api.namespace(), "election.loss-policy=recontend")
        .withBean(KubernetesClient.class, () -> api.replica("pod").client())
        .run(context -> {
          ElectionDecision decision = context.getBean(ElectionDecision.class);
          assertThat(decision.outcome()).isEqualTo(ElectionDecision.Outcome.CONTEND);
          assertThat(decision.reasons()).containsExactly(ElectionDecision.Reason.IN_KUBERNETES_POD);
        });
  }

  /** A property given a value the library rejects, and the library call that rejects the same value. */
  static Stream<Arguments> rejectedValues() {
    return Stream.of(
        rejected("election.lease-name=Orders_Controller",
            () -> LeaseSettings.builder().leaseName("Orders_Controller").build()),
        rejected("election.namespace=Shop", () -> withName().namespace("Shop").build()),
        rejected("election.identity=", () -> withName().identity("").build()),
        rejected("election.lease-duration=1500ms", () -> withName().leaseDuration(Duration.ofMillis(1500)).build()),
        rejected("election.lease-duration=0s", () -> withName().leaseDuration(Duration.ZERO).build()),
        rejected("election.renew-deadline=15s", () -> withName().renewDeadline(Duration.ofSeconds(15)).build()),
        rejected("election.retry-period=9s", () -> withName().retryPeriod(Duration.ofSeconds(9)).build()),
        rejected("election.retry-period=-1s", () -> withName().retryPeriod(Duration.ofSeconds(-1)).build()),
        rejected("election.request-timeout=100ms",
            () -> withName().requestTimeout(Duration.ofMillis(100)).build()),
        rejected("election.request-timeout=6s", () -> withName().requestTimeout(Duration.ofSeconds(6)).build()),
        rejected("election.health-budget=9s", () -> withName().healthBudget(Duration.ofSeconds(9)).build()),
        rejected("election.stop-timeout=0s", () -> withName().stopTimeout(Duration.ZERO).build()),
        rejected("election.kill-switch-variable=1_SWITCH",
            () -> ElectionPolicy.builder().killSwitchVariable("1_SWITCH")),
        rejected("election.kill-switch-variable=", () -> ElectionPolicy.builder().killSwitchVariable("")),
        rejected("election.substrate.name=", () -> Substrate.of("", true)),
        rejected("LEADER_ELECTION_ENABLED=ture",
            () -> ElectionPolicy.defaults().decide(Environment.of(Map.of("LEADER_ELECTION_ENABLED", "ture")),
                KUBERNETES)));
  }

  private static LeaseSettings.Builder withName() {
    return LeaseSettings.builder().leaseName("orders-controller");
  }

  private static Arguments rejected(String property, Executable library) {
    return Arguments.of(property, library);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rejectedValues")
  void aValueTheLibraryRejectsFailsTheStartUpWithTheLibrarysMessage(String property, Executable library) {
    Throwable expected = catchThrowable(library::execute);
    assertThat(expected).as("the library rejects it too").isInstanceOf(InvalidElectionSettingException.class);

    Contexts.election()
        .withPropertyValues("election.lease-name=orders-controller", property)
        .run(context -> {
          assertThat(context).hasFailed();
          assertThat(Contexts.settingFailure(context.getStartupFailure())).hasMessage(expected.getMessage());
        });
  }

  @Test
  void aMissingLeaseNameFailsTheStartUpWithTheLibrarysMessage() {
    Throwable expected = catchThrowable(() -> LeaseSettings.builder().build());

    Contexts.election().withPropertyValues(Contexts.UNELECTED).run(context -> {
      assertThat(context).hasFailed();
      InvalidElectionSettingException failure = Contexts.settingFailure(context.getStartupFailure());
      assertThat(failure).hasMessage(expected.getMessage());
      assertThat(failure.setting()).isEqualTo("leaseName");
    });
  }

  @Test
  void aValueSpringCannotConvertFailsTheBindingNamingTheProperty() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.lease-duration=fifteen seconds")
        .run(context -> {
          assertThat(context).hasFailed();
          assertThat(context.getStartupFailure()).hasStackTraceContaining("election.lease-duration");
        });
  }
}
