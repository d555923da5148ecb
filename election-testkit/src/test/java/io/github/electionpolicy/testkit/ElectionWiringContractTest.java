package io.github.electionpolicy.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.KillSwitch;
import io.github.electionpolicy.ProcessHost;
import io.github.electionpolicy.Substrate;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/**
 * The contract catches wiring mistakes and passes correct wiring. The wirings below are nested classes, so
 * Surefire does not run them itself; the tests run them through the jqwik engine, as a downstream build would.
 */
class ElectionWiringContractTest {

  private static final TruthTable.Row ROW_1 = TruthTable.rows().get(0);
  private static final TruthTable.Row ROW_3 = TruthTable.row(KillSwitch.State.ELECTION_ON, ProcessHost.Kind.OUTSIDE_POD, true);
  private static final TruthTable.Row ROW_4 = TruthTable.rows().get(3);

  /** A start-up done right: decide with the controller's policy, log, then contend or start reconcilers. */
  static ObservedStartup wellWiredStartUp(ElectionPolicy policy, Environment environment, Substrate substrate) {
    ElectionDecision decision = policy.decide(environment, substrate);
    return actOn(decision).withLoggedSummary("INFO election: " + decision.summary());
  }

  /** What a controller does with a decision; the mis-wired ones below do not expose their log. */
  static ObservedStartup actOn(ElectionDecision decision) {
    return decision.contends() ? ObservedStartup.contended() : ObservedStartup.ranUnelected();
  }

  static final class CorrectlyWired implements ElectionWiringContract {
    @Override
    public ObservedStartup startUp(Environment environment, Substrate substrate) {
      return wellWiredStartUp(ElectionPolicy.defaults(), environment, substrate);
    }
  }

  static final class CorrectlyWiredWithCustomKillSwitch implements ElectionWiringContract {
    @Override
    public String killSwitchVariable() {
      return "MY_OPERATOR_LEADER_ELECTION";
    }

    @Override
    public ObservedStartup startUp(Environment environment, Substrate substrate) {
      ElectionPolicy policy = ElectionPolicy.builder().killSwitchVariable("MY_OPERATOR_LEADER_ELECTION").build();
      return wellWiredStartUp(policy, environment, substrate);
    }
  }

  /** The classic mistake: the controller passes a hard-coded substrate that "does not use" the API. */
  static final class SubstrateFlagHardCoded implements ElectionWiringContract {
    @Override
    public ObservedStartup startUp(Environment environment, Substrate substrate) {
      return actOn(ElectionPolicy.defaults().decide(environment, Substrate.of(substrate.name(), false)));
    }
  }

  /** Reads the default kill switch although the deployment documents a custom one. */
  static final class KillSwitchVariableForgotten implements ElectionWiringContract {
    @Override
    public String killSwitchVariable() {
      return "MY_OPERATOR_LEADER_ELECTION";
    }

    @Override
    public ObservedStartup startUp(Environment environment, Substrate substrate) {
      return actOn(ElectionPolicy.defaults().decide(environment, substrate));
    }
  }

  @Test
  void aLoggedSummaryCatchesAMisWiringEvenOnRowsWhereTheOutcomeIsRight() {
    ElectionWiringContract loggingTheWrongDecision = (environment, substrate) -> {
      ElectionDecision decision = ElectionPolicy.defaults().decide(environment, Substrate.of(substrate.name(), false));
      return actOn(decision).withLoggedSummary(decision.summary());
    };

    AssertionError failure = failureOf(Scenario.canonical(ROW_1), loggingTheWrongDecision);

    assertThat(failure).hasMessageStartingWith(
        "election wiring follows row 1 of the truth table but logged a summary that is not the library's");
  }

  @Test
  void aCorrectWiringPassesEveryPropertyOfTheContract() {
    EngineExecutionResults results = runContract(CorrectlyWired.class);

    results.testEvents().assertStatistics(stats -> stats.started(3).succeeded(3).failed(0));
  }

  @Test
  void aCorrectWiringWithACustomKillSwitchPassesEveryPropertyOfTheContract() {
    EngineExecutionResults results = runContract(CorrectlyWiredWithCustomKillSwitch.class);

    results.testEvents().assertStatistics(stats -> stats.started(3).succeeded(3).failed(0));
  }

  @Test
  void aHardCodedSubstrateFlagIsCaughtOnRowThreeByTheExhaustiveProperty() {
    EngineExecutionResults results = runContract(SubstrateFlagHardCoded.class);

    results.testEvents().assertStatistics(stats -> stats.started(3).failed(2).succeeded(1));
    assertThat(failureMessages(results))
        .containsKey("wiringFollowsEveryRowOfTheTruthTable")
        .containsKey("wiringFollowsTheTruthTableInEverySpelling");
    assertThat(failureMessages(results).get("wiringFollowsEveryRowOfTheTruthTable"))
        .contains("election wiring does not follow row 3 of the truth table")
        .contains("expected:    CONTEND [SUBSTRATE_USES_KUBERNETES_API]")
        .contains("observed:    started reconcilers without leader election and did not contend")
        .contains("environment: {}")
        .contains("substrate:   kubernetes (uses the Kubernetes API)");
  }

  @Test
  void aForgottenCustomKillSwitchIsCaughtOnTheElectionOffRowsAndTheInvalidValues() {
    EngineExecutionResults results = runContract(KillSwitchVariableForgotten.class);

    results.testEvents().assertStatistics(stats -> stats.started(3).failed(3));
    assertThat(failureMessages(results).get("wiringFollowsEveryRowOfTheTruthTable"))
        .containsPattern("does not follow row [5-8] of the truth table")
        .contains("MY_OPERATOR_LEADER_ELECTION=\"false\"");
    assertThat(failureMessages(results).get("wiringStopsOnAnInvalidKillSwitch"))
        .contains("election wiring did not stop on an invalid kill switch");
  }

  @Test
  void theCheckPassesAWellWiredStartUpOnEveryRow() {
    for (TruthTable.Row row : TruthTable.rows()) {
      assertThatCode(() -> ElectionWiringCheck.verify(Scenario.canonical(row), new CorrectlyWired()))
          .as("%s", row).doesNotThrowAnyException();
    }
  }

  @Test
  void aFailureNamesTheRowWhatWasExpectedWhatHappenedAndTheEnvironment() {
    Scenario scenario = new Scenario(
        ROW_3, "LEADER_ELECTION_ENABLED", Map.of("LEADER_ELECTION_ENABLED", " yEs\t"), Substrate.of("jobs", true));

    AssertionError failure = failureOf(scenario, new SubstrateFlagHardCoded());

    assertThat(failure.getMessage()).startsWith("election wiring does not follow row 3 of the truth table\n")
        .contains("  expected:    CONTEND [SUBSTRATE_USES_KUBERNETES_API]: contend for the leader Lease")
        .contains("  observed:    started reconcilers without leader election and did not contend")
        .contains("  row:         row 3 (kill switch ELECTION_ON, host OUTSIDE_POD, substrate uses the Kubernetes API)")
        .contains("  environment: {LEADER_ELECTION_ENABLED=\" yEs\\t\"}")
        .contains("  substrate:   jobs (uses the Kubernetes API)")
        .contains("  library:     CONTEND [SUBSTRATE_USES_KUBERNETES_API]: Contending for the leader Lease");
  }

  @Test
  void aReconcilerStartedBeforeTheDecisionIsCaughtOnAContendRow() {
    AssertionError failure = failureOf(Scenario.canonical(ROW_1), (env, substrate) -> ObservedStartup.of(true, true));

    assertThat(failure).hasMessageContaining("row 1")
        .hasMessageContaining("observed:    contended for the Lease AND started reconcilers without the Lease");
  }

  @Test
  void aStartUpThatStartsNothingIsCaught() {
    AssertionError failure = failureOf(Scenario.canonical(ROW_4), (env, substrate) -> ObservedStartup.of(false, false));

    assertThat(failure).hasMessageContaining("row 4")
        .hasMessageContaining("expected:    RUN_UNELECTED [OUTSIDE_POD_WITHOUT_KUBERNETES_API]")
        .hasMessageContaining("observed:    neither contended for the Lease nor started reconcilers");
  }

  @Test
  void aStartUpThatThrowsOnAValidRowIsCaughtWithItsException() {
    IllegalStateException crash = new IllegalStateException("no API server");

    AssertionError failure = failureOf(Scenario.canonical(ROW_1), (env, substrate) -> {
          throw crash;
        });

    assertThat(failure).hasMessageContaining("observed:    start-up failed with " + crash).hasCause(crash);
  }

  @Test
  void aLoggedSummaryOfAnotherDecisionIsCaught() {
    AssertionError failure = failureOf(Scenario.canonical(ROW_1),
            (env, substrate) -> ObservedStartup.contended().withLoggedSummary("Contending, trust me"));

    assertThat(failure).hasMessageContaining("follows row 1 of the truth table but logged a summary")
        .hasMessageContaining("observed:    \"Contending, trust me\"");
  }

  @Test
  void aStartUpThatSwallowsAnInvalidKillSwitchIsCaught() {
    ElectionWiringContract swallowing = (env, substrate) -> {
      try {
        return wellWiredStartUp(ElectionPolicy.defaults(), env, substrate);
      } catch (IllegalArgumentException e) {
        return ObservedStartup.ranUnelected();
      }
    };

    AssertionError failure = failureOf(killSwitchSetTo("ture"), swallowing);

    assertThat(failure).hasMessageContaining("election wiring did not stop on an invalid kill switch")
        .hasMessageContaining("expected:    start-up fails with an InvalidElectionSettingException naming "
            + "LEADER_ELECTION_ENABLED=\"ture\"")
        .hasMessageContaining("observed:    started reconcilers without leader election");
  }

  @Test
  void aWrappedInvalidSettingExceptionCountsAsStoppingOnAnInvalidKillSwitch() {
    ElectionWiringContract wrapping = (env, substrate) -> {
      try {
        return ElectionPolicy.defaults().decide(env, substrate).contends()
            ? ObservedStartup.contended() : ObservedStartup.ranUnelected();
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException("controller failed to start", e);
      }
    };

    assertThatCode(() -> ElectionWiringCheck.verify(killSwitchSetTo("flase"), wrapping)).doesNotThrowAnyException();
  }

  @Test
  void aStartUpThatReturnsNothingIsToldWhatToReturn() {
    AssertionError failure = failureOf(Scenario.canonical(ROW_1), (env, substrate) -> null);

    assertThat(failure).hasMessageContaining("startUp returned null");
  }

  private static AssertionError failureOf(Scenario scenario, ElectionWiringContract wiring) {
    return catchThrowableOfType(AssertionError.class, () -> ElectionWiringCheck.verify(scenario, wiring));
  }

  private static AssertionError failureOf(InvalidKillSwitchScenario scenario, ElectionWiringContract wiring) {
    return catchThrowableOfType(AssertionError.class, () -> ElectionWiringCheck.verify(scenario, wiring));
  }

  private static InvalidKillSwitchScenario killSwitchSetTo(String invalidValue) {
    return new InvalidKillSwitchScenario(ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE, invalidValue,
        Map.of(ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE, invalidValue), Substrate.withoutKubernetesApi("direct"));
  }

  private static EngineExecutionResults runContract(Class<? extends ElectionWiringContract> wiring) {
    return EngineTestKit.engine("jqwik")
        .selectors(selectClass(wiring))
        .configurationParameter("jqwik.database", "target/jqwik-database-contract")
        .configurationParameter("jqwik.reporting.onlyfailures", "true")
        // Expected failures go to the platform's report entries, not to the build log.
        .configurationParameter("jqwik.reporting.usejunitplatform", "true")
        // Shrinking makes a user's failure short, but only slows down these checks of the first failure.
        .configurationParameter("jqwik.shrinking.default", "OFF")
        .execute();
  }

  /** The failure message of each failed property, by the property's method name. */
  private static Map<String, String> failureMessages(EngineExecutionResults results) {
    List<Event> failed = results.testEvents().failed().list();
    return failed.stream().collect(Collectors.toMap(
        event -> event.getTestDescriptor().getLegacyReportingName().replaceAll("\\(.*", ""),
        event -> event.getPayload(TestExecutionResult.class)
            .flatMap(TestExecutionResult::getThrowable)
            .map(Throwable::getMessage)
            .orElse("")));
  }
}
