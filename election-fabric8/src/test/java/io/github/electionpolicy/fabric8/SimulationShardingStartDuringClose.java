package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Example;

/**
 * Finding h-attack3-3 (the root of h-attack3-2, seen from a plain close): a replica's {@code close()} starts the work of
 * a shard it is handing over, when that shard's take was on its way. docs/sharding.md: "A shard being handed over is
 * no longer in them (its work is stopping), so no new work for it starts here meanwhile"; ShardCoordinator.handOver:
 * "From the hand-over on the shard is not this replica's to start work for"; ShardSimChecks: a runner whose take is on
 * its way and that is closed "releases it with no work started". The leave's hand-over of a contending runner is held
 * until the replica's view shows its leaving mark (ShardDriver: HandOver LEAVING, {@code mark.hold}); the runner is not
 * closed meanwhile, its take lands, it leads and its lifecycle starts the shard's work ({@code ShardService.start},
 * for a {@code ShardedOperator} every cached resource of the shard reconciled), which is stopped again once the mark is
 * seen. The Lease keeps every other replica out, so no overlap.
 *
 * <p>Script: {@link SimulationShardingStartAfterLossStop}'s (2 replicas, 2 shards, replica-1's process dies at 3 s,
 * replica-0 takes its shard once expired), with replica-0 closed at a swept moment instead of a loss. A start after the
 * close is found with the loss-stop probe ({@code lossStopAt} set at the close, so that {@link
 * ShardSimChecks#workStarted} flags any start from then on; only those lines are counted).
 *
 * <p>Measured: seeds 1 to 40, the close every 100 ms from 3 s to 8 s (2,040 runs): 13 runs start a shard's work 1 to
 * 37 ms after {@code close()} (e.g. seed 2 closed at 5,000 ms starts shard 1 at 5,031.0; seed 34 closed at 7,800 ms
 * starts shard 1 at 7,836.8). With ShardDriver's hold skipped for LEAVING hand-overs (a local experiment, reverted):
 * 0 of 2,040.
 *
 * <p>Fixed: {@link LeavingMark} holds only work that runs; a runner whose work has not started is closed at once, and a
 * held one that takes its shard again is closed before its start. 0 of 2,040 since; the replays were red before.
 */
class SimulationShardingStartDuringClose {

  static List<String> startsAfterClose(long seed, long closeAtNanos) {
    long faultEnd = 12_000_000_000L;
    ShardSim.Config config = new ShardSim.Config(seed, 2, 2, 2, 1400, 300, 466, 2000, 30, faultEnd,
        faultEnd + 6_000_000_000L, 0, false, ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE);
    ShardSim.Result result = ShardSim.run(config, sim -> {
      sim.at(3_000_000_000L, () -> {
        ShardSimReplica other = sim.replicas().get(1);
        if (other.alive) {
          sim.checks().disturbance(1);
          other.die();
        }
      });
      sim.at(closeAtNanos, () -> {
        ShardSimReplica me = sim.replicas().get(0);
        if (me.alive && me.runner != null) {
          me.lossStopAt = sim.now(); // the probe: a start from now on is flagged by workStarted
          me.close();
        }
      });
    });
    List<String> starts = new ArrayList<>();
    for (String violation : result.checks().violations) {
      if (violation.contains("starts shard")) {
        starts.add("seed " + seed + " closed at " + closeAtNanos / 1_000_000 + " ms: " + violation);
      }
    }
    return starts;
  }

  /** The literal replays (red before the fix). */
  @Example
  void aClosingReplicaStartsNoWorkForAShardItHandsOver() {
    long[][] cases = {{2, 5_000_000_000L}, {31, 4_900_000_000L}, {34, 7_800_000_000L}, {38, 4_900_000_000L}};
    List<String> found = new ArrayList<>();
    for (long[] c : cases) {
      found.addAll(startsAfterClose(c[0], c[1]));
    }
    assertThat(found).isEmpty();
  }

  /** The sweep the replays come from (about 10 s; red before the fix: 13 of 2,040 runs). */
  @Example
  void theSweep() {
    List<String> found = new ArrayList<>();
    for (long seed = 1; seed <= 40; seed++) {
      for (long at = 3_000_000_000L; at <= 8_000_000_000L; at += 100_000_000L) {
        found.addAll(startsAfterClose(seed, at));
      }
    }
    System.out.println("h-attack3 close sweep: runs with a start after close() " + found.size());
    found.forEach(System.out::println);
    assertThat(found).isEmpty();
  }
}
