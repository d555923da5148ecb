package io.github.electionpolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The decision as a value: its summary, its derived parts and its consistency checks. */
class ElectionDecisionTest {
  private static final Map<String, String> POD =
      Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443");

  private static ElectionDecision decide(Map<String, String> env, Substrate substrate) {
    return ElectionPolicy.defaults().decide(Environment.of(env), substrate);
  }

  @Test
  void killSwitchSummaryNamesTheVariableItsValueAndTheOneReplicaRule() {
    String summary = decide(Map.of("LEADER_ELECTION_ENABLED", "Off"), Substrate.usingKubernetesApi("kubernetes"))
        .summary();

    assertThat(summary)
        .contains("WITHOUT leader election")
        .contains("kill switch LEADER_ELECTION_ENABLED=\"Off\"")
        .contains("only safe with one replica");
  }

  @Test
  void outsidePodSummaryNamesTheHostAndTheSubstrate() {
    String summary = decide(Map.of(), Substrate.withoutKubernetesApi("direct")).summary();

    assertThat(summary)
        .contains("without leader election")
        .contains("outside a Kubernetes pod")
        .contains("substrate \"direct\" does not use the Kubernetes API");
  }

  @Test
  void podSummaryNamesThePod() {
    String summary = decide(POD, Substrate.withoutKubernetesApi("direct")).summary();

    assertThat(summary)
        .startsWith("Contending for the leader Lease because the process runs in a Kubernetes pod")
        .doesNotContain("uses the Kubernetes API")
        .contains("election is on (LEADER_ELECTION_ENABLED (unset))");
  }

  @Test
  void substrateSummaryNamesTheSubstrate() {
    String summary = decide(Map.of("LEADER_ELECTION_ENABLED", "yes"), Substrate.usingKubernetesApi("kubernetes"))
        .summary();

    assertThat(summary)
        .startsWith("Contending for the leader Lease because substrate \"kubernetes\" uses the Kubernetes API")
        .doesNotContain("pod")
        .contains("LEADER_ELECTION_ENABLED=\"yes\"");
  }

  @Test
  void podAndSubstrateSummaryNamesBoth() {
    String summary = decide(POD, Substrate.usingKubernetesApi("kubernetes")).summary();

    assertThat(summary)
        .contains("runs in a Kubernetes pod")
        .contains(" and substrate \"kubernetes\" uses the Kubernetes API");
  }

  @Test
  void summaryIsOneLineEvenWhenInputsHoldLineBreaks() {
    ElectionDecision decision =
        decide(Map.of("LEADER_ELECTION_ENABLED", "off\n"), Substrate.of("multi\nline", true));

    assertThat(decision.summary()).doesNotContain("\n").doesNotContain("\r")
        .contains("LEADER_ELECTION_ENABLED=\"off\\n\"");
    assertThat(decide(Map.of(), Substrate.of("multi\r\nline", false)).summary())
        .doesNotContain("\n").contains("\"multi\\r\\nline\"");
  }

  @Test
  void warningsComeFromTheHost() {
    ElectionDecision decision = decide(Map.of("KUBERNETES_SERVICE_PORT", "443"), Substrate.of("k", true));

    assertThat(decision.warnings()).isEqualTo(decision.processHost().warnings()).hasSize(1);
  }

  @Test
  void reasonsAreUnmodifiable() {
    ElectionDecision decision = decide(POD, Substrate.usingKubernetesApi("kubernetes"));

    assertThatThrownBy(() -> decision.reasons().clear()).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void ofAppliesTheRuleToTypedInputs() {
    KillSwitch on = KillSwitch.read(Environment.of(Map.of()), "LEADER_ELECTION_ENABLED");
    ProcessHost outside = new ProcessHost(Optional.empty(), Optional.empty());

    assertThat(ElectionDecision.of(on, outside, Substrate.of("k", true)))
        .isInstanceOf(ElectionDecision.Contend.class);
    assertThat(ElectionDecision.of(on, outside, Substrate.of("d", false)))
        .isInstanceOf(ElectionDecision.RunUnelected.class);
  }

  @Test
  void recordsRefuseInputsThatLeadToTheOtherOutcome() {
    KillSwitch on = KillSwitch.read(Environment.of(Map.of()), "LEADER_ELECTION_ENABLED");
    ProcessHost outside = new ProcessHost(Optional.empty(), Optional.empty());

    assertThatThrownBy(() -> new ElectionDecision.Contend(on, outside, Substrate.of("d", false)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("inputs lead to RUN_UNELECTED, not CONTEND");
    assertThatThrownBy(() -> new ElectionDecision.RunUnelected(on, outside, Substrate.of("k", true)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("inputs lead to CONTEND, not RUN_UNELECTED");
  }

  @Test
  void ofRejectsNulls() {
    KillSwitch on = KillSwitch.read(Environment.of(Map.of()), "LEADER_ELECTION_ENABLED");
    ProcessHost outside = new ProcessHost(Optional.empty(), Optional.empty());
    Substrate direct = Substrate.of("d", false);

    assertThatThrownBy(() -> ElectionDecision.of(null, outside, direct))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("killSwitch");
    assertThatThrownBy(() -> ElectionDecision.of(on, null, direct))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("processHost");
    assertThatThrownBy(() -> ElectionDecision.of(on, outside, null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("substrate");
  }

  @Test
  void toStringShowsTheRecordTheReasonsAndTheSummary() {
    ElectionDecision decision = decide(POD, Substrate.withoutKubernetesApi("direct"));

    assertThat(decision.toString())
        .startsWith("ElectionDecision.Contend[IN_KUBERNETES_POD]: Contending");
  }
}
