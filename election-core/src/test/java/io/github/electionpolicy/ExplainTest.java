package io.github.electionpolicy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ExplainTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(Map<String, String> env, String... args) {
    return Explain.run(args, Environment.of(env),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void printsOutcomeReasonsWarningsAndSummary() {
    int status = run(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1"), "--substrate", "kubernetes",
        "--uses-kubernetes-api");

    assertThat(status).isEqualTo(Explain.EXIT_DECIDED);
    assertThat(out())
        .contains("outcome:     CONTEND")
        .contains("reason:      SUBSTRATE_USES_KUBERNETES_API")
        .contains("warning:     KUBERNETES_SERVICE_HOST is set but KUBERNETES_SERVICE_PORT is not set")
        .contains("substrate:   kubernetes (uses the Kubernetes API)")
        .contains("summary:     Contending for the leader Lease because substrate \"kubernetes\"");
    assertThat(err()).isEmpty();
  }

  @Test
  void defaultsToTheDirectSubstrate() {
    assertThat(run(Map.of())).isZero();
    assertThat(out()).contains("outcome:     RUN_UNELECTED")
        .contains("reason:      OUTSIDE_POD_WITHOUT_KUBERNETES_API")
        .contains("substrate:   direct (no Kubernetes API)");
  }

  @Test
  void readsACustomKillSwitchVariable() {
    assertThat(run(Map.of("MY_SWITCH", "off"), "--kill-switch-variable", "MY_SWITCH")).isZero();
    assertThat(out()).contains("kill switch: MY_SWITCH=\"off\" -> ELECTION_OFF")
        .contains("reason:      KILL_SWITCH_OFF");
  }

  @Test
  void invalidKillSwitchExitsWithTwoAndTheMessageOnStandardError() {
    assertThat(run(Map.of("LEADER_ELECTION_ENABLED", "perhaps"))).isEqualTo(Explain.EXIT_INVALID);
    assertThat(err()).startsWith("explain: LEADER_ELECTION_ENABLED=\"perhaps\" is not valid");
    assertThat(out()).isEmpty();
  }

  @Test
  void unknownOptionExitsWithTwoAndUsage() {
    assertThat(run(Map.of(), "--frobnicate")).isEqualTo(Explain.EXIT_INVALID);
    assertThat(err()).contains("unknown option \"--frobnicate\"").contains("usage: explain");
  }

  @Test
  void missingOptionValueExitsWithTwo() {
    assertThat(run(Map.of(), "--substrate")).isEqualTo(Explain.EXIT_INVALID);
    assertThat(err()).contains("--substrate needs a value");
  }

  @Test
  void blankSubstrateExitsWithTwo() {
    assertThat(run(Map.of(), "--substrate", " ")).isEqualTo(Explain.EXIT_INVALID);
    assertThat(err()).contains("substrate name=\" \" is not valid");
  }

  @Test
  void helpPrintsUsage() {
    assertThat(run(Map.of(), "--help")).isZero();
    assertThat(out()).startsWith("usage: explain");
  }
}
