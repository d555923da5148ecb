package io.github.electionpolicy.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.KillSwitch;
import io.github.electionpolicy.ProcessHost;
import net.jqwik.api.ForAll;
import net.jqwik.api.GenerationMode;
import net.jqwik.api.Property;

/** The library against the table, exhaustively: eight rows, eight tries. */
class TruthTableProperties {

  @Property(generation = GenerationMode.EXHAUSTIVE)
  void theDefaultPolicyDecidesEveryRowAsTheTableSays(@ForAll TruthTable.Row row) {
    Scenario scenario = Scenario.canonical(row);

    ElectionDecision decision = ElectionPolicy.defaults().decide(scenario.environment(), scenario.substrate());

    assertThat(decision.outcome()).as("outcome for %s", row).isEqualTo(row.outcome());
    assertThat(decision.reasons()).as("reasons for %s", row).isEqualTo(row.reasons());
  }

  @Property(generation = GenerationMode.EXHAUSTIVE)
  void everyCombinationOfInputsHasExactlyItsOwnRow(
      @ForAll KillSwitch.State killSwitch,
      @ForAll ProcessHost.Kind processHost,
      @ForAll boolean substrateUsesKubernetesApi) {
    TruthTable.Row row = TruthTable.row(killSwitch, processHost, substrateUsesKubernetesApi);

    assertThat(row.killSwitch()).isEqualTo(killSwitch);
    assertThat(row.processHost()).isEqualTo(processHost);
    assertThat(row.substrateUsesKubernetesApi()).isEqualTo(substrateUsesKubernetesApi);
    assertThat(TruthTable.rowFor(Scenario.canonical(row).decide())).isEqualTo(row);
  }

  @Property(generation = GenerationMode.EXHAUSTIVE)
  void aCustomKillSwitchVariableDecidesEveryRowAsTheTableSays(@ForAll TruthTable.Row row) {
    Scenario scenario = Scenario.canonical(row, "MY_OPERATOR_LEADER_ELECTION");

    ElectionDecision decision = scenario.decide();

    assertThat(decision.outcome()).as("outcome for %s", row).isEqualTo(row.outcome());
    assertThat(decision.reasons()).as("reasons for %s", row).isEqualTo(row.reasons());
  }
}
