package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Example;

/**
 * Finding (review h-leave): a leaver stays ({@code ShardCoordinator.lingers}) while its view shows any other leaver
 * holding a shard, also one whose mark the server stored after its own. Such a later leaver never names it: the view
 * that names that leaver's successors is the first to show its own mark, so it shows this one's, stored before, and
 * counts this one out. Only a leaver whose mark came first may name this one from a view that lags behind this one's
 * mark. Waiting for a later leaver's slow stops keeps this replica's {@code close()} for up to a lease duration.
 *
 * <p>3 replicas, 6 shards, lease 1 s, renew deadline 700 ms, retry 200 ms. At 3 s (fair: 2 shards each) replica-0
 * closes (its shards' stops wait 60 ms for their thread); 20 ms later, once replica-0's mark is stored, replica-1
 * closes, each of its shards' stops taking 800 ms. Replica-0 has nothing to wait for: its membership Lease should be
 * released within a few round trips of its own stops.
 */
class SimulationShardingLeaveNotHeldByALaterLeaver {

  /** Replica-0's stops (60 ms) and a few round trips, far less than replica-1's stops (800 ms). */
  static final long PROMPT_NANOS = 300_000_000L;

  /** How long after its close replica-0's membership Lease was released or deleted on the server, in ns; -1: never. */
  static long leaveTook(long seed, ShardCoordinator.Flaw flaw) {
    ShardSim.Config config = new ShardSim.Config(seed, 3, 6, 1, 700, 200, 233, 2000, 5, 6_000_000_000L,
        6_000_000_000L + ShardSimChecks.fairnessBoundNanos(1_000_000_000L, 200_000_000L) + 3_000_000_000L, 0, false,
        flaw, ShardDriverFlaw.NONE);
    String member = new ShardLeases(ShardSim.LEASE, 6).memberLease("replica-0");
    long closedAt = 3_000_000_000L;
    long[] took = {-1};
    ShardSim.run(config, sim -> {
      ShardSimReplica first = sim.replicas().get(0);
      ShardSimReplica second = sim.replicas().get(1);
      sim.at(closedAt, () -> {
        first.callbackDelayNanos = 60_000_000L;
        first.close();
      });
      sim.at(closedAt + 20_000_000L, () -> {
        second.callbackDelayNanos = 800_000_000L;
        second.close();
      });
      for (long t = closedAt; t < 6_000_000_000L; t += 1_000_000L) {
        sim.at(t, () -> {
          ShardSimServer.Stored stored = sim.server().stored(member);
          if (took[0] < 0 && (stored == null || stored.record().holder() == null)) {
            took[0] = sim.now() - closedAt;
          }
        });
      }
    });
    return took[0];
  }

  @Example
  void aLeaverDoesNotWaitForTheStopsOfALeaverWhoseMarkCameLater() {
    List<String> slow = new ArrayList<>();
    for (long seed = 1; seed <= 4; seed++) {
      long took = leaveTook(seed, ShardCoordinator.Flaw.NONE);
      if (took < 0 || took > PROMPT_NANOS) {
        slow.add("seed " + seed + ": replica-0 left " + took / 1_000_000 + " ms after its close");
      }
    }
    assertThat(slow).isEmpty();
  }

  /** The scale-down by two still has the leaver named by an earlier one stay (SimulationShardingLeaveByTwo). */
  @Example
  void theLeaverNamedByAnEarlierOneStillStays() {
    for (long seed = 1; seed <= 4; seed++) {
      assertThat(SimulationShardingLeaveByTwo.longestHandOver(seed, ShardCoordinator.Flaw.NONE)[0])
          .as("seed " + seed).isLessThanOrEqualTo(SimulationShardingLeaveByTwo.NO_EXPIRY_NANOS);
    }
  }
}
