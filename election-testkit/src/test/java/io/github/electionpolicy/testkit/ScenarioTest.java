package io.github.electionpolicy.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Substrate;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ScenarioTest {

  private static final TruthTable.Row ROW_5 = TruthTable.rows().get(4);

  @Test
  void theCanonicalScenarioOfARowSpellsItPlainly() {
    Scenario scenario = Scenario.canonical(ROW_5, "MY_SWITCH");

    assertThat(scenario.variables()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443", "MY_SWITCH", "false"));
    assertThat(scenario.substrate()).isEqualTo(Substrate.usingKubernetesApi("kubernetes"));
    assertThat(scenario.policy().killSwitchVariable()).isEqualTo("MY_SWITCH");
  }

  @Test
  void theCanonicalScenarioLeavesAnElectionOnKillSwitchUnset() {
    assertThat(Scenario.canonical(TruthTable.rows().get(3)).variables()).isEmpty();
    assertThat(Scenario.canonical(TruthTable.rows().get(3)).killSwitchVariable())
        .isEqualTo(ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE);
  }

  @Test
  void aScenarioRejectsASubstrateOfTheWrongCapability() {
    assertThatThrownBy(() -> new Scenario(ROW_5, "X", Map.of(), Substrate.withoutKubernetesApi("direct")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("substrate=direct (no Kubernetes API) is not valid for row 5");
  }

  @Test
  void extraVariablesMustNotBeOnesTheDecisionReads() {
    Scenario scenario = Scenario.canonical(ROW_5);

    assertThatThrownBy(() -> scenario.withExtraVariables(Map.of("LEADER_ELECTION_ENABLED", "true")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("LEADER_ELECTION_ENABLED=\"true\" is not valid as an extra variable");
    assertThat(scenario.withExtraVariables(Map.of("HOME", "/root")).variables()).containsEntry("HOME", "/root");
  }

  @Test
  void describingAScenarioQuotesValuesSoBlanksShow() {
    Scenario scenario = new Scenario(
        TruthTable.rows().get(3), "LEADER_ELECTION_ENABLED", Map.of("LEADER_ELECTION_ENABLED", " \t"),
        Substrate.withoutKubernetesApi("direct"));

    assertThat(scenario.describe()).contains("environment: {LEADER_ELECTION_ENABLED=\" \\t\"}");
  }

  @Test
  void anInvalidKillSwitchScenarioMustSetTheInvalidValue() {
    assertThatThrownBy(() -> new InvalidKillSwitchScenario("X", "ture", Map.of("X", "true"), Substrate.of("d", false)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("X=\"true\" is not valid");
  }
}
