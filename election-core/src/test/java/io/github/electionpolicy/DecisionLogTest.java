package io.github.electionpolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

class DecisionLogTest {
  private final RecordingLogger logger = new RecordingLogger();

  private static ElectionDecision decide(Map<String, String> env, boolean usesApi) {
    return ElectionPolicy.defaults().decide(Environment.of(env), Substrate.of("sub", usesApi));
  }

  @Test
  void contendingIsOneInfoLineWithTheSummaryAndTheReasons() {
    ElectionDecision decision = decide(Map.of(), true);

    DecisionLog.log(decision, logger);

    assertThat(logger.lines).containsExactly(new RecordingLogger.Line(
        Level.INFO, decision.summary() + " reasons=[SUBSTRATE_USES_KUBERNETES_API]"));
  }

  @Test
  void killSwitchOffIsOneWarnLine() {
    ElectionDecision decision = decide(Map.of("LEADER_ELECTION_ENABLED", "false"), true);

    DecisionLog.log(decision, logger);

    assertThat(logger.lines).singleElement().satisfies(line -> {
      assertThat(line.level()).isEqualTo(Level.WARN);
      assertThat(line.message()).contains("only safe with one replica").contains("KILL_SWITCH_OFF");
    });
  }

  @Test
  void outsidePodWithoutApiIsOneInfoLine() {
    DecisionLog.log(decide(Map.of(), false), logger);

    assertThat(logger.lines).singleElement().extracting(RecordingLogger.Line::level).isEqualTo(Level.INFO);
  }

  @Test
  void warningsFollowTheSummaryAtWarn() {
    DecisionLog.log(decide(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1"), false), logger);

    assertThat(logger.lines).hasSize(2);
    assertThat(logger.lines.get(1).level()).isEqualTo(Level.WARN);
    assertThat(logger.lines.get(1).message()).contains("KUBERNETES_SERVICE_PORT is not set");
  }

  @Test
  void defaultLoggerWorksWithTheApplicationsBinding() {
    DecisionLog.log(decide(Map.of(), true));

    assertThat(DecisionLog.LOGGER_NAME).isEqualTo("io.github.electionpolicy.ElectionDecision");
  }

  @Test
  void rejectsNulls() {
    assertThatThrownBy(() -> DecisionLog.log(null, logger)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> DecisionLog.log(decide(Map.of(), true), null))
        .isInstanceOf(NullPointerException.class);
  }
}
