package io.github.electionpolicy.benchmarks.failover;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** What the table prints for each server mode, from hand-made results. */
class ResultTableTest {

  private static final long LEASE = Timings.FAST.leaseDuration().toNanos();

  @Test
  void onTheMockTheLoadRowsCarryTheCountsAndWritesAreTimedServerSide() {
    String table = new ResultTable(results(OptionalDouble.of(300), OptionalDouble.of(21.4)),
        List.of("stock", "ours"), ServerMode.mock()).format(Timings.FAST);

    assertThat(table)
        .contains("| leader Lease requests per minute | 300.0 | 300.0 | 300.0 | 300.0 | 1.00 | 1.00 |")
        .contains("new leader's acquiring write, server side (s)")
        .doesNotContain(ResultTable.NOT_COUNTED);
  }

  @Test
  void onARealServerTheLoadRowsSayNotCountedAndTheTableSaysWhy() {
    String table = new ResultTable(results(OptionalDouble.empty(), OptionalDouble.empty()),
        List.of("stock", "ours"), ServerMode.real(Path.of("admin.kubeconfig"))).format(Timings.FAST);

    assertThat(table)
        .contains("| leader Lease requests per minute | n/a (TLS) | n/a (TLS) | n/a (TLS) | n/a (TLS) | n/a (TLS) "
            + "| n/a (TLS) |")
        .contains("| follower Lease requests per minute (each) | n/a (TLS)")
        .contains("new leader's acquiring write, seen by a watch (s)")
        .contains("- on the real API server Lease writes are timed when a watch of the harness delivered them")
        .contains("| graceful hand-over: close → new leader's reconcilers start (s) | 1.000 | 1.000 | 0.020 | 0.020 "
            + "| 0.020 | 0.020 |");
  }

  private static List<RoundResult> results(OptionalDouble leader, OptionalDouble follower) {
    return List.of(
        new RoundResult("stock", Timings.FAST, Scenario.GRACEFUL, 1_000_000_000L, OptionalLong.empty(),
            OptionalLong.empty(), leader, follower),
        new RoundResult("stock", Timings.FAST, Scenario.CRASH, 1_900_000_000L, OptionalLong.of(LEASE + 90_000_000L),
            OptionalLong.of(LEASE + 89_000_000L), leader, follower),
        new RoundResult("ours", Timings.FAST, Scenario.GRACEFUL, 20_000_000L, OptionalLong.empty(),
            OptionalLong.empty(), leader, follower),
        new RoundResult("ours", Timings.FAST, Scenario.CRASH, 2_000_000_000L, OptionalLong.of(LEASE + 13_000_000L),
            OptionalLong.of(LEASE + 9_000_000L), leader, follower));
  }
}
