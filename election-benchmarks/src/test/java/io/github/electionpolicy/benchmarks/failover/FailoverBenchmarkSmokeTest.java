package io.github.electionpolicy.benchmarks.failover;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One round of the failover benchmark at fast timings with two stock replicas, so that {@code mvn verify}
 * proves the command works end to end: mock server, clients, elector, server-side counting and the table.
 */
class FailoverBenchmarkSmokeTest {

  private static final Timings FAST = Timings.FAST;
  private static ResultTable table;
  private static String printed;

  @BeforeAll
  static void runOneRound() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    BenchmarkSettings settings = BenchmarkSettings.parse(
        "timings=fast", "rounds.fast=1", "replicas=2", "settle.ms=1200", "warmup=0", "contenders=stock");
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      table = FailoverBenchmark.run(settings, out);
    }
    printed = bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void measuresOneGracefulAndOneCrashRound() {
    assertThat(table.results()).extracting(RoundResult::scenario)
        .containsExactly(Scenario.GRACEFUL, Scenario.CRASH);
  }

  @Test
  void gracefulHandOverHappensWithinTheLeaseDurationPlusASecond() {
    RoundResult graceful = table.results().get(0);
    assertThat(Duration.ofNanos(graceful.handOverNanos()))
        .isPositive()
        .isLessThan(FAST.leaseDuration().plusSeconds(1));
  }

  @Test
  void crashTakeOverIsMeasuredFromTheLastRenewSeenByTheServer() {
    RoundResult crash = table.results().get(1);
    Duration sinceRenew = Duration.ofNanos(crash.sinceLastRenewNanos().orElseThrow());
    Duration acquireSinceRenew = Duration.ofNanos(crash.acquireSinceLastRenewNanos().orElseThrow());
    // The stock elector judges expiry from the leader's own renewTime stamp, so it may be a request latency early.
    assertThat(acquireSinceRenew).isBetween(FAST.leaseDuration().minusMillis(500), FAST.leaseDuration().plusSeconds(3));
    assertThat(sinceRenew).isGreaterThanOrEqualTo(acquireSinceRenew);
  }

  @Test
  void serverCountsMoreRequestsFromTheLeaderThanFromAFollower() {
    RoundResult graceful = table.results().get(0);
    assertThat(graceful.followerRequestsPerMinute()).isPositive();
    assertThat(graceful.leaderRequestsPerMinute()).isGreaterThan(graceful.followerRequestsPerMinute());
  }

  @Test
  void printsTheTableWithTheStockColumn() {
    assertThat(printed)
        .contains("| metric | stock median | stock p95 |")
        .contains("graceful hand-over")
        .contains("of 1 crash rounds");
  }
}
