package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Example;

/**
 * Why a hand-over is dated from the successor's own membership write and never from its sight of the hand-over
 * (docs/sharding.md, "How a shard is handed over"). Two replicas, two shards, lease 2 s, renew deadline 1.4 s: replica-0
 * owns both; replica-1 joins at 2 s, and its list and watch lags 1 s behind the server from its start. When replica-0
 * hands a shard over to it, replica-1's requests are lost for 3 s: it cannot renew. replica-0 sees its own hand-over at
 * once, and once replica-1's membership Lease has expired it takes the shard back after the hand-over's lease
 * duration, counted from its own sight. replica-1 sees the hand-over a second late and takes it in: dated from its
 * membership write (sent before the hand-over) its term ends before replica-0 can take the shard; dated from its sight,
 * its term would last 1.4 s from there, past replica-0's take, and the shard's work would run in both, were it not for
 * the membership guard (below).
 */
class SimulationShardHandOverDating {

  static ShardSim.Result run(long seed, ShardCoordinator.Flaw coordinatorFlaw, ShardDriverFlaw flaw) {
    long faultEnd = 8_000_000_000L;
    ShardSim.Config config = new ShardSim.Config(seed, 1, 2, 2, 1400, 300, 466, 2000, 5, faultEnd,
        faultEnd + ShardSimChecks.fairnessBoundNanos(2_000_000_000L, 300_000_000L) + 3_000_000_000L, 0, false,
        coordinatorFlaw, flaw);
    return ShardSim.run(config, sim -> {
      ShardSimReplica joiner = sim.replicas().get(1);
      sim.at(2_000_000_000L, () -> {
        sim.checks().disturbance(1); // a lagging view and lost requests: no gap bound holds meanwhile
        sim.lagView(joiner, 1_000_000_000L);
        ShardSimFaults.fault(sim, ShardSimFaults.Kind.SCALE_UP, joiner, 0, 0, 0, 0);
      });
      Runnable[] probe = new Runnable[1];
      probe[0] = () -> {
        if (handedTo(sim, joiner.identity)) {
          sim.network().partition(joiner.slot, SimSchedule.Direction.REQUESTS_LOST, 1);
          sim.at(sim.now() + 3_000_000_000L, () -> {
            sim.network().partition(joiner.slot, SimSchedule.Direction.REQUESTS_LOST, -1);
            sim.lagView(joiner, 0);
            sim.checks().disturbance(-1);
            sim.checks().lingers(1_000_000_000L);
          });
        } else if (sim.now() < 6_000_000_000L) {
          sim.at(sim.now() + 1_000_000L, probe[0]);
        }
      };
      sim.at(2_000_000_000L, probe[0]);
    });
  }

  private static boolean handedTo(ShardSim sim, String identity) {
    for (int shard = 0; shard < 2; shard++) {
      ShardSimServer.Stored stored = sim.server().stored(ShardSim.LEASE + "-shard-" + shard);
      if (stored != null && identity.equals(stored.record().holder()) && stored.record().handOverProof() != null) {
        return true;
      }
    }
    return false;
  }

  @Example
  void theRealRunnerEndsAHandedOverTermBeforeAnyoneElseCanTakeTheShard() {
    for (long seed = 1; seed <= 10; seed++) {
      ShardSim.Result result = run(seed, ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE);
      assertThat(result.checks().violations).as("seed %d", seed).isEmpty();
      assertThat(result.checks().handOversWritten).as("seed %d: a shard handed over to the joiner", seed).isPositive();
    }
  }

  /**
   * The dating is one of two guards: the other is membership (a member's shard work stops when its membership Lease
   * is lost, and nobody takes a live member's shard), which alone masks a successor that dates a hand-over from its
   * sight, here as in {@link SimulationSharding}. With the membership guard broken as well, the dating is what keeps
   * the shard in one replica: the broken dating runs it in two, the real one does not.
   */
  @Example
  void withMembershipLossIgnoredOnlyTheDatingKeepsTheShardInOneReplica() {
    int datedAtSight = 0;
    int dated = 0;
    for (long seed = 1; seed <= 10; seed++) {
      datedAtSight += run(seed, ShardCoordinator.Flaw.IGNORES_MEMBERSHIP_LOSS,
          ShardDriverFlaw.HAND_OVER_DATED_AT_SIGHT).checks().shardOverlaps > 0 ? 1 : 0;
      dated += run(seed, ShardCoordinator.Flaw.IGNORES_MEMBERSHIP_LOSS, ShardDriverFlaw.NONE).checks().shardOverlaps;
    }
    assertThat(datedAtSight).as("seeds of 10 whose shard ran in two replicas, dated at sight").isPositive();
    assertThat(dated).as("overlaps with the real dating").isZero();
  }
}
