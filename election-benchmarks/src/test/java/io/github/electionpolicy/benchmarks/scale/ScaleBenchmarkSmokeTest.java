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
          "settle.ms=300", "steady.ms=0", "heap.samples=1", "lead.timeout.s=60"), out);
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
  void everyScaleCommandOnThePerformancePageParses() throws Exception {
    String page = java.nio.file.Files.readString(java.nio.file.Path.of(System.getProperty("basedir", "."))
        .resolve("../docs/performance.md").normalize());
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("-Dscale\\.args=\"([^\"]*)\"").matcher(page);
    int commands = 0;
    while (m.find()) {
      String[] args = java.util.Arrays.stream(m.group(1).trim().split("\\s+"))
          .filter(a -> !a.startsWith("kubeconfig="))   // the cluster it names is not running here
          .toArray(String[]::new);
      assertThat(ScaleSettings.parse(args)).as(m.group(1)).isNotNull();
      commands++;
    }
    assertThat(commands).isPositive();
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
