package io.github.electionpolicy.benchmarks.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A tiny sharding run and a tiny first-reconcile run, so that {@code mvn verify} proves both commands run and report,
 * and that the ledger counted no key or shard owned twice at once. Only that: the figures belong in
 * docs/performance.md, never in a test.
 */
class ShardingBenchmarkSmokeTest {

  @Test
  void twoReplicasShareTheKeysAndNothingIsReconciledTwiceAtOnce() throws Exception {
    String printed = run(out -> ShardingBenchmark.run(new String[] {"replicas=2", "keys=400", "shards=4",
        "workers=2", "cost.ms=2", "measure.s=1", "lease.ms=2000", "renew.ms=1500", "retry.ms=200"}, out));
    assertThat(printed).contains("| replicas | reconciles/s | against one |");
    // The row of 2 replicas ends with the two counts of the ledger: keys and shards owned twice at once.
    assertThat(printed).containsPattern("SHARDING-BENCH \\| 2 \\| .* \\| 0 \\| 0 \\|");
  }

  @Test
  void reportsTheFirstReconcileOfMovedShardsWarmAndCold() throws Exception {
    String printed = run(out -> FirstReconcileBenchmark.run(new String[] {"objects=40", "rounds=1"}, out));
    assertThat(printed).contains("| warm/16 shards | 1 |").contains("| warm/1 shards | 1 |")
        .contains("| cold/1 shards | 1 |");
  }

  private interface Run {
    void into(PrintStream out) throws Exception;
  }

  private static String run(Run run) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      run.into(out);
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }
}
