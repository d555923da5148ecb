package io.github.electionpolicy.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionDecision.Outcome;
import io.github.electionpolicy.ElectionDecision.Reason;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.KillSwitch;
import io.github.electionpolicy.ProcessHost;
import java.util.EnumSet;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class TruthTableTest {

  static List<TruthTable.Row> rows() {
    return TruthTable.rows();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void everyRowAgreesWithTheDefaultPolicy(TruthTable.Row row) {
    Scenario scenario = Scenario.canonical(row);

    ElectionDecision decision = ElectionPolicy.defaults().decide(scenario.environment(), scenario.substrate());

    assertThat(decision.outcome()).as("outcome of %s", row).isEqualTo(row.outcome());
    assertThat(decision.reasons()).as("reasons of %s", row).isEqualTo(row.reasons());
    assertThat(TruthTable.rowFor(decision)).isEqualTo(row);
  }

  @Test
  void holdsEightRowsOneForEveryCombinationOfInputs() {
    assertThat(TruthTable.rows()).hasSize(8);
    assertThat(TruthTable.rows().stream()
            .map(r -> List.of(r.killSwitch(), r.processHost(), r.substrateUsesKubernetesApi()))
            .distinct())
        .hasSize(8);
  }

  @Test
  void numbersTheRowsOneToEightInOrder() {
    assertThat(TruthTable.rows()).extracting(TruthTable.Row::number)
        .containsExactlyElementsOf(IntStream.rangeClosed(1, 8).boxed().collect(Collectors.toList()));
  }

  @Test
  void looksUpTheRowForItsInputs() {
    TruthTable.Row row = TruthTable.row(KillSwitch.State.ELECTION_ON, ProcessHost.Kind.OUTSIDE_POD, true);

    assertThat(row.number()).isEqualTo(3);
    assertThat(row.outcome()).isEqualTo(Outcome.CONTEND);
    assertThat(row.reasons()).containsExactly(Reason.SUBSTRATE_USES_KUBERNETES_API);
  }

  @Test
  void aKillSwitchThatTurnsElectionOffOverridesEveryOtherInput() {
    assertThat(TruthTable.rows())
        .filteredOn(row -> row.killSwitch() == KillSwitch.State.ELECTION_OFF)
        .hasSize(4)
        .allSatisfy(row -> {
          assertThat(row.outcome()).isEqualTo(Outcome.RUN_UNELECTED);
          assertThat(row.reasons()).containsExactly(Reason.KILL_SWITCH_OFF);
        });
  }

  @Test
  void describesARowByItsInputsAndItsExpectation() {
    assertThat(TruthTable.rows().get(2)).hasToString(
        "row 3 (kill switch ELECTION_ON, host OUTSIDE_POD, substrate uses the Kubernetes API)"
            + " expects CONTEND [SUBSTRATE_USES_KUBERNETES_API]");
  }

  @Test
  void rendersMarkdownWithAHeaderAndOneLinePerRow() {
    List<String> lines = TruthTable.toMarkdown().lines().collect(Collectors.toList());

    assertThat(lines).hasSize(10);
    assertThat(lines.get(0)).startsWith("| Row | Kill switch | Process host |");
    assertThat(lines.get(3)).isEqualTo(
        "| 2 | `ELECTION_ON` | `KUBERNETES_POD` | no | `CONTEND` | `IN_KUBERNETES_POD` |");
    assertThat(lines.get(2)).isEqualTo("| 1 | `ELECTION_ON` | `KUBERNETES_POD` | yes | `CONTEND` | "
        + "`IN_KUBERNETES_POD`, `SUBSTRATE_USES_KUBERNETES_API` |");
    assertThat(TruthTable.toMarkdown()).endsWith(" |\n");
  }

  @Test
  void aRowNeedsAtLeastOneReason() {
    assertThatThrownBy(() -> new TruthTable.Row(
            1, KillSwitch.State.ELECTION_ON, ProcessHost.Kind.KUBERNETES_POD, true, Outcome.CONTEND,
            EnumSet.noneOf(Reason.class)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("reasons=[] is not valid");
  }

  @Test
  void aRowsReasonsCannotBeChanged() {
    assertThatThrownBy(() -> TruthTable.rows().get(0).reasons().add(Reason.KILL_SWITCH_OFF))
        .isInstanceOf(UnsupportedOperationException.class);
  }
}
