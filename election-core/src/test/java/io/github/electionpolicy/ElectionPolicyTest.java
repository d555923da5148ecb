package io.github.electionpolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.ElectionDecision.Outcome;
import io.github.electionpolicy.ElectionDecision.Reason;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ElectionPolicyTest {
  private static final Substrate DIRECT = Substrate.withoutKubernetesApi("direct");
  private static final Substrate KUBERNETES = Substrate.usingKubernetesApi("kubernetes");

  @Test
  void defaultsReadLeaderElectionEnabled() {
    assertThat(ElectionPolicy.defaults().killSwitchVariable()).isEqualTo("LEADER_ELECTION_ENABLED");
    assertThat(ElectionPolicy.builder().build()).isEqualTo(ElectionPolicy.defaults());
  }

  @Test
  void customKillSwitchVariableIsReadAndTheDefaultIgnored() {
    ElectionPolicy policy = ElectionPolicy.builder().killSwitchVariable("DISPATCHER_ELECTION").build();
    Environment env = Environment.of(Map.of(
        "DISPATCHER_ELECTION", "off",
        "LEADER_ELECTION_ENABLED", "true"));

    ElectionDecision decision = policy.decide(env, KUBERNETES);

    assertThat(decision.outcome()).isEqualTo(Outcome.RUN_UNELECTED);
    assertThat(decision.reasons()).containsExactly(Reason.KILL_SWITCH_OFF);
    assertThat(decision.killSwitch().variable()).isEqualTo("DISPATCHER_ELECTION");
  }

  @Test
  void customKillSwitchVariableIgnoresGarbageInTheDefaultOne() {
    ElectionPolicy policy = ElectionPolicy.builder().killSwitchVariable("DISPATCHER_ELECTION").build();
    Environment env = Environment.of(Map.of("LEADER_ELECTION_ENABLED", "garbage"));

    assertThat(policy.decide(env, KUBERNETES).outcome()).isEqualTo(Outcome.CONTEND);
  }

  @Test
  void invalidKillSwitchFailsTheDecision() {
    Environment env = Environment.of(Map.of("LEADER_ELECTION_ENABLED", "sometimes"));

    assertThatThrownBy(() -> ElectionPolicy.defaults().decide(env, DIRECT))
        .isInstanceOf(InvalidElectionSettingException.class)
        .hasMessageStartingWith("LEADER_ELECTION_ENABLED=\"sometimes\" is not valid");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "\t", "LEADER ELECTION", "1ELECTION", "LEADER-ELECTION", "A=B"})
  void builderRejectsKillSwitchVariablesThatAreNotVariableNames(String variable) {
    assertThatThrownBy(() -> ElectionPolicy.builder().killSwitchVariable(variable))
        .isInstanceOf(InvalidElectionSettingException.class)
        .hasMessageStartingWith("killSwitchVariable=" + Text.quote(variable) + " is not valid")
        .hasMessageContaining("letters, digits and underscores")
        .hasMessageContaining("fix:");
  }

  @Test
  void builderRejectsNull() {
    assertThatThrownBy(() -> ElectionPolicy.builder().killSwitchVariable(null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("killSwitchVariable");
  }

  @Test
  void decideRejectsNulls() {
    ElectionPolicy policy = ElectionPolicy.defaults();

    assertThatThrownBy(() -> policy.decide(null, DIRECT))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("environment");
    assertThatThrownBy(() -> policy.decide(Environment.of(Map.of()), null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("substrate");
  }

  @Test
  void decidingTwiceGivesEqualDecisions() {
    Environment env = Environment.of(Map.of(
        "KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443"));

    ElectionDecision first = ElectionPolicy.defaults().decide(env, KUBERNETES);
    ElectionDecision second = ElectionPolicy.defaults().decide(env, KUBERNETES);

    assertThat(first).isEqualTo(second).hasSameHashCodeAs(second);
    assertThat(first.summary()).isEqualTo(second.summary());
  }

  @Test
  void halfSetPodEnvironmentIsCarriedAsAWarning() {
    Environment env = Environment.of(Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1"));

    ElectionDecision decision = ElectionPolicy.defaults().decide(env, DIRECT);

    assertThat(decision.outcome()).isEqualTo(Outcome.RUN_UNELECTED);
    assertThat(decision.warnings()).singleElement().asString().contains("KUBERNETES_SERVICE_PORT");
  }

  @Test
  void policiesWithTheSameVariableAreEqual() {
    assertThat(ElectionPolicy.builder().killSwitchVariable("X").build())
        .isEqualTo(ElectionPolicy.builder().killSwitchVariable("X").build())
        .isNotEqualTo(ElectionPolicy.defaults())
        .hasToString("ElectionPolicy{killSwitchVariable=X}");
  }
}
