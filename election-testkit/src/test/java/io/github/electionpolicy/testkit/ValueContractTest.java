package io.github.electionpolicy.testkit;

import com.google.common.testing.EqualsTester;
import com.google.common.testing.NullPointerTester;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.KillSwitch;
import io.github.electionpolicy.ProcessHost;
import io.github.electionpolicy.Substrate;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every public value type of the testkit rejects {@code null} wherever it takes an object (guava-testlib's
 * {@link NullPointerTester} calls each public method and constructor with one {@code null} argument at a time), and
 * compares by value ({@link EqualsTester}).
 */
class ValueContractTest {

  private static final TruthTable.Row ROW_1 = TruthTable.rows().get(0);
  private static final TruthTable.Row ROW_4 = TruthTable.rows().get(3);
  private static final Substrate KUBERNETES = Substrate.usingKubernetesApi("kubernetes");

  private static NullPointerTester tester() {
    return new NullPointerTester()
        .setDefault(TruthTable.Row.class, ROW_1)
        .setDefault(Substrate.class, KUBERNETES)
        .setDefault(Scenario.class, Scenario.canonical(ROW_1))
        .setDefault(ElectionDecision.class, Scenario.canonical(ROW_1).decide())
        .setDefault(ElectionWiringContract.class, (environment, substrate) -> ObservedStartup.contended())
        .setDefault(InvalidKillSwitchScenario.class, invalid("maybe"))
        .setDefault(Throwable.class, new IllegalStateException("failed"))
        .setDefault(Set.class, Set.of(ElectionDecision.Reason.IN_KUBERNETES_POD));
  }

  @Test
  void truthTableAndItsRowsRejectNull() {
    tester().testAllPublicStaticMethods(TruthTable.class);
    tester().testAllPublicConstructors(TruthTable.Row.class);
    tester().testAllPublicInstanceMethods(ROW_1);
  }

  @Test
  void rowsCompareByValue() {
    new EqualsTester()
        .addEqualityGroup(ROW_1, TruthTable.row(KillSwitch.State.ELECTION_ON, ProcessHost.Kind.KUBERNETES_POD, true),
            new TruthTable.Row(ROW_1.number(), ROW_1.killSwitch(), ROW_1.processHost(),
                ROW_1.substrateUsesKubernetesApi(), ROW_1.outcome(), ROW_1.reasons()))
        .addEqualityGroup(ROW_4)
        .testEquals();
  }

  @Test
  void scenariosRejectNull() {
    tester().testAllPublicStaticMethods(Scenario.class);
    tester().testAllPublicConstructors(Scenario.class);
    tester().testAllPublicInstanceMethods(Scenario.canonical(ROW_1));
  }

  @Test
  void scenariosCompareByValue() {
    new EqualsTester()
        .addEqualityGroup(Scenario.canonical(ROW_1), Scenario.canonical(ROW_1, "LEADER_ELECTION_ENABLED"))
        .addEqualityGroup(Scenario.canonical(ROW_1, "ORDERS_ELECTION"))
        .addEqualityGroup(Scenario.canonical(ROW_1).withExtraVariables(Map.of("LANG", "C")))
        .addEqualityGroup(Scenario.canonical(ROW_4))
        .testEquals();
  }

  @Test
  void invalidKillSwitchScenariosRejectNull() {
    InvalidKillSwitchScenario scenario = invalid("maybe");
    tester().testAllPublicConstructors(InvalidKillSwitchScenario.class);
    tester().testAllPublicInstanceMethods(scenario);
  }

  @Test
  void invalidKillSwitchScenariosCompareByValue() {
    new EqualsTester()
        .addEqualityGroup(invalid("maybe"), invalid("maybe"))
        .addEqualityGroup(invalid("enabeld"))
        .testEquals();
  }

  private static InvalidKillSwitchScenario invalid(String value) {
    return new InvalidKillSwitchScenario("LEADER_ELECTION_ENABLED", value, Map.of("LEADER_ELECTION_ENABLED", value),
        KUBERNETES);
  }

  @Test
  void observedStartupsRejectNull() {
    tester().testAllPublicStaticMethods(ObservedStartup.class);
    tester().testAllPublicInstanceMethods(ObservedStartup.contended());
  }

  @Test
  void observedStartupsCompareByValue() {
    IllegalStateException failure = new IllegalStateException("failed");
    new EqualsTester()
        .addEqualityGroup(ObservedStartup.contended(), ObservedStartup.of(true, false))
        .addEqualityGroup(ObservedStartup.ranUnelected(), ObservedStartup.of(false, true))
        .addEqualityGroup(ObservedStartup.of(false, false))
        .addEqualityGroup(ObservedStartup.contended().withLoggedSummary("a"),
            ObservedStartup.contended().withLoggedSummary("a"))
        .addEqualityGroup(ObservedStartup.failedToStart(failure), ObservedStartup.failedToStart(failure))
        .testEquals();
  }

  @Test
  void arbitrariesAndTheWiringCheckRejectNull() {
    tester().testAllPublicStaticMethods(ElectionArbitraries.class);
    tester().testAllPublicStaticMethods(ElectionWiringCheck.class);
  }
}
