package io.github.electionpolicy;

import static io.github.electionpolicy.ElectionDecision.Outcome.CONTEND;
import static io.github.electionpolicy.ElectionDecision.Outcome.RUN_UNELECTED;
import static io.github.electionpolicy.ElectionDecision.Reason.KILL_SWITCH_OFF;
import static io.github.electionpolicy.ElectionDecision.Reason.SUBSTRATE_USES_KUBERNETES_API;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.ElectionDecision.Outcome;
import io.github.electionpolicy.ElectionDecision.Reason;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The whole decision, row by row: kill switch x process host x substrate capability. */
class ElectionDecisionTableTest {

  @ParameterizedTest(name = "kill switch {0}, pod {1}, substrate uses API {2} -> {3} {4}")
  @CsvSource(delimiter = '|', textBlock = """
      on  | true  | true  | CONTEND       | IN_KUBERNETES_POD SUBSTRATE_USES_KUBERNETES_API
      on  | true  | false | CONTEND       | IN_KUBERNETES_POD
      on  | false | true  | CONTEND       | SUBSTRATE_USES_KUBERNETES_API
      on  | false | false | RUN_UNELECTED | OUTSIDE_POD_WITHOUT_KUBERNETES_API
      off | true  | true  | RUN_UNELECTED | KILL_SWITCH_OFF
      off | true  | false | RUN_UNELECTED | KILL_SWITCH_OFF
      off | false | true  | RUN_UNELECTED | KILL_SWITCH_OFF
      off | false | false | RUN_UNELECTED | KILL_SWITCH_OFF
      """)
  void decidesEveryRowWithTheExactReasons(
      String killSwitch, boolean pod, boolean usesApi, Outcome outcome, String reasons) {
    Map<String, String> variables = new HashMap<>();
    variables.put("LEADER_ELECTION_ENABLED", killSwitch);
    if (pod) {
      variables.put("KUBERNETES_SERVICE_HOST", "10.96.0.1");
      variables.put("KUBERNETES_SERVICE_PORT", "443");
    }

    ElectionDecision decision =
        ElectionPolicy.defaults().decide(Environment.of(variables), Substrate.of("sub", usesApi));

    assertThat(decision.outcome()).isEqualTo(outcome);
    assertThat(decision.reasons()).isEqualTo(reasonSet(reasons));
    assertThat(decision).isInstanceOf(outcome == CONTEND ? ElectionDecision.Contend.class
        : ElectionDecision.RunUnelected.class);
    assertThat(decision.contends()).isEqualTo(outcome == CONTEND);
  }

  @Test
  void killSwitchOffWinsOverEveryOtherInput() {
    Environment env = Environment.of(Map.of(
        "LEADER_ELECTION_ENABLED", "false",
        "KUBERNETES_SERVICE_HOST", "10.96.0.1",
        "KUBERNETES_SERVICE_PORT", "443"));

    ElectionDecision decision = ElectionPolicy.defaults().decide(env, Substrate.usingKubernetesApi("kubernetes"));

    assertThat(decision.outcome()).isEqualTo(RUN_UNELECTED);
    assertThat(decision.reasons()).containsExactly(KILL_SWITCH_OFF);
  }

  @Test
  void unsetKillSwitchLeavesElectionOn() {
    ElectionDecision decision =
        ElectionPolicy.defaults().decide(Environment.of(Map.of()), Substrate.usingKubernetesApi("kubernetes"));

    assertThat(decision.outcome()).isEqualTo(CONTEND);
    assertThat(decision.reasons()).containsExactly(SUBSTRATE_USES_KUBERNETES_API);
    assertThat(decision.killSwitch().rawValue()).isEmpty();
  }

  private static Set<Reason> reasonSet(String names) {
    return Stream.of(names.trim().split("\\s+")).map(Reason::valueOf).collect(Collectors.toSet());
  }
}
