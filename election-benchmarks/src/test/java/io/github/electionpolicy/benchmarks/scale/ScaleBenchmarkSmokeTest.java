package io.github.electionpolicy.benchmarks.scale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A tiny scale run (two elections of each implementation with a follower each, fast timings, short settle) and a
 * tiny first-election probe, so that {@code mvn verify} proves both commands run and report. Only that: the
 * figures belong in docs/performance.md, never in a test.
 */
class ScaleBenchmarkSmokeTest {

  @Test
  void runsTwoElectionsOfEachImplementationAndPrintsTheTable() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    List<ScaleResult> results;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      results = ScaleBenchmark.run(ScaleSettings.parse("elections=2", "timings=fast", "followers=true",
          "settle.ms=300", "heap.samples=1", "lead.timeout.s=60"), out);
    }
    String printed = bytes.toString(StandardCharsets.UTF_8);

    assertThat(results).extracting(ScaleResult::contender).containsExactly("stock", "ours");
    assertThat(results).allSatisfy(r -> {
      assertThat(r.elections()).isEqualTo(2);
      assertThat(r.replicas()).isEqualTo(4);
      assertThat(r.toLeadSeconds().count()).isEqualTo(2);
    });
    assertThat(printed)
        .contains("| timings | contender | elections | replicas |")
        .contains("| fast | stock | 2 | 4 |")
        .contains("| fast | ours | 2 | 4 |");
  }

  @Test
  void probesOneFirstElectionOfEachImplementation() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Map<String, ?> medians;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      medians = FirstElectionProbe.run(ScaleSettings.parse(), 1, 0, out);
    }

    assertThat(medians).containsOnlyKeys("stock", "ours");
    assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("| ours | access reviews: first sent to last answered |");
  }

  @Test
  void refusesBadSettingsNamingTheSetting() {
    assertThatThrownBy(() -> ScaleSettings.parse("elections=0")).hasMessageStartingWith("elections=0 is not valid");
    assertThatThrownBy(() -> ScaleSettings.parse("contenders=mine")).hasMessageStartingWith("contenders=mine");
    assertThatThrownBy(() -> ScaleSettings.parse("followers=yes")).hasMessageStartingWith("followers=yes");
    assertThatThrownBy(() -> ScaleSettings.parse("kubeconfig=/nonexistent/admin.kubeconfig"))
        .hasMessageStartingWith("kubeconfig=/nonexistent/admin.kubeconfig is not valid");
    assertThatThrownBy(() -> ScaleSettings.parse("rounds=3")).hasMessageStartingWith("rounds is not valid");
  }
}
