package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Example;

/**
 * Finding h-attack3-2: a replica whose loss policy said {@code STOP} starts a shard's work after that answer. docs/sharding.md: "checks that such
 * a replica, once its policy said so, starts no shard's work again" ({@link ShardSimChecks#workStarted}); the random
 * runs of {@link SimulationSharding} rarely reach it, since their losses come from outages in which no take lands.
 *
 * <p>Script: 2 replicas, 2 shards, lease 2 s, renew deadline 1.4 s, retry 300 ms; replica-0's loss handler answers
 * {@code STOP}. At 3 s replica-1's process dies, so replica-0 plans replica-1's shard and takes it once its Lease expired
 * in replica-0's view. At a moment swept over the following seconds, the shard Lease replica-0 holds is deleted by hand
 * ({@code kubectl delete lease}, a foreign write): that shard's runner loses its term at its next renewal (404), its
 * work stops, the handler answers {@code STOP}. When the other shard's take is on its way at that moment, its answer is
 * taken in and the shard's work starts: nothing tells the other runners of the replica until the lost shard's runner
 * reported {@code STOPPED LOST} (ShardDriver.shardState, leaveOnItsOwn), and even then the leave's hand-over of a
 * contending runner is held until the view shows the leaving mark (LeavingMark), while its take may still land.
 *
 * <p>Seed 6, deleted at 4,600 ms (trace, {@code -Dsim.trace=true}): 4,878.6 ms the server stores replica-0's take of
 * shard 1; 4,884.9 replica-0 stops shard 0; 4,886.8 the handler says STOP; 4,897.7 replica-0 starts shard 1's work
 * (token 1): VIOLATION; 4,911.6 its leaving mark; 4,942.5 it stops shard 1 again. Sweep (seeds 1 to 40, the deletion
 * every 100 ms from 3 s to 8 s, 2,040 runs, 1,867 loss stops): 23 runs with such a start, in seeds 6, 9, 10, 23, 27,
 * 30, 34 and others, each 8 to 31 ms after the handler's STOP.
 *
 * <p>Fixed: {@link LeavingMark} holds only work that runs; a runner whose work has not started is closed at once, and a
 * held one that takes its shard again is closed before its start. 0 of 2,040 since; the replays were red before.
 */
class SimulationShardingStartAfterLossStop {

  static ShardSim.Result run(long seed, long deleteAtNanos) {
    long faultEnd = 12_000_000_000L;
    ShardSim.Config config = new ShardSim.Config(seed, 2, 2, 2, 1400, 300, 466, 2000, 30, faultEnd,
        faultEnd + 6_000_000_000L, 0, false, ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE).withStopSlots(1);
    return ShardSim.run(config, sim -> {
      sim.at(3_000_000_000L, () -> {
        ShardSimReplica other = sim.replicas().get(1);
        if (other.alive) {
          sim.checks().disturbance(1);
          other.die();
        }
      });
      sim.at(deleteAtNanos, () -> {
        ShardSimReplica me = sim.replicas().get(0);
        for (int shard = 0; shard < 2; shard++) {
          String lease = ShardSim.LEASE + "-shard-" + shard;
          ShardSimServer.Stored stored = sim.server().stored(lease);
          if (me.alive && stored != null && me.identity.equals(stored.record().holder())) {
            sim.server().deleteByHand(lease);
            return;
          }
        }
      });
    });
  }

  /** The literal replays: each starts a shard's work after the handler's STOP (red before the fix). */
  @Example
  void aReplicaWhoseHandlerSaidStopStartsNoShardsWorkAgain() {
    long[][] cases = {{6, 4_600_000_000L}, {9, 4_800_000_000L}, {23, 4_700_000_000L}, {34, 7_500_000_000L}};
    List<String> found = new ArrayList<>();
    for (long[] c : cases) {
      ShardSim.Result result = run(c[0], c[1]);
      assertThat(result.checks().lossStops).as("seed %d: the handler answered STOP", c[0]).isPositive();
      result.checks().violations.stream().filter(v -> v.contains("loss policy"))
          .forEach(v -> found.add("seed " + c[0] + " delete at " + c[1] / 1_000_000 + " ms: " + v));
    }
    assertThat(found).isEmpty();
  }

  /** The sweep the replays come from (about 15 s; red before the fix: 23 of 2,040 runs). */
  @Example
  void theSweep() {
    List<String> found = new ArrayList<>();
    int stops = 0;
    for (long seed = 1; seed <= 40; seed++) {
      for (long at = 3_000_000_000L; at <= 8_000_000_000L; at += 100_000_000L) {
        ShardSim.Result result = run(seed, at);
        stops += result.checks().lossStops;
        for (String violation : result.checks().violations) {
          if (violation.contains("loss policy")) {
            found.add("seed " + seed + " delete at " + at / 1_000_000 + " ms: " + violation);
          }
        }
      }
    }
    System.out.println("h-attack3 sweep: loss stops " + stops + ", runs with a start after STOP " + found.size());
    assertThat(stops).as("losses the handler answered STOP").isPositive();
    assertThat(found).isEmpty();
  }
}
