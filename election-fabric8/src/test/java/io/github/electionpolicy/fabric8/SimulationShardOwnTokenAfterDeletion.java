package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Example;

/**
 * A replica's own shard runner takes a term under a token that its list and watch has not shown yet (the watch lags
 * behind the replica's own calls); the runner then stops (the membership Lease was lost: every shard is handed over)
 * and the shard's Lease is deleted by hand after the release. The replica's next runner of the shard creates the Lease
 * again: docs/reliability.md, "Running replicas remember the highest count they saw and continue above it", and this
 * replica wrote that token itself, so the new term's token must be above it, not the same one again.
 *
 * <p>The check reads the server's Lease every millisecond: each new term (a new holder or acquireTime) must carry a
 * leaseTransitions above every earlier term's of the shard.
 */
class SimulationShardOwnTokenAfterDeletion {

  record Outcome(List<String> repeats, int terms, boolean deletedAfterRelease) {}

  static Outcome run(long seed) {
    long faultEnd = 6_000_000_000L;
    ShardSim.Config config = new ShardSim.Config(seed, 1, 1, 2, 1400, 300, 466, 2000, 30, faultEnd,
        faultEnd + ShardSimChecks.fairnessBoundNanos(2_000_000_000L, 300_000_000L) + 3_000_000_000L, 0, false,
        ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE);
    String shardLease = ShardSim.LEASE + "-shard-0";
    List<String> repeats = new ArrayList<>();
    int[] terms = {0};
    boolean[] deletedAfterRelease = {false};
    ShardSim.run(config, sim -> {
      ShardSimReplica replica = sim.replicas().get(0);
      String memberLease = new ShardLeases(ShardSim.LEASE, 1).memberLease(replica.identity);
      String[] lastTerm = {null};
      int[] highest = {-1};
      Runnable[] probe = new Runnable[1];
      probe[0] = () -> {
        ShardSimServer.Stored stored = sim.server().stored(shardLease);
        if (stored != null && stored.record().holder() != null) {
          LeaseRecord r = stored.record();
          String term = r.holder() + "@" + r.acquireTime();
          if (!term.equals(lastTerm[0])) {
            terms[0]++;
            if (r.transitions() <= highest[0]) {
              repeats.add(String.format("%.3fms %s took token %d after token %d", sim.now() / 1e6, r.holder(),
                  r.transitions(), highest[0]));
            }
            lastTerm[0] = term;
            highest[0] = Math.max(highest[0], r.transitions());
          }
        }
        if (sim.now() < config.endNanos() - 2_000_000L) {
          sim.at(sim.now() + 1_000_000L, probe[0]);
        }
      };
      sim.at(1_000_000L, probe[0]);
      // 3 s: the shard is held; from now the replica's list and watch lags 30 s behind; the Lease is deleted by hand,
      // and the replica's runner creates it again under a token its view has not shown.
      sim.at(3_000_000_000L, () -> {
        sim.checks().disturbance(1);
        sim.lagView(replica, 30_000_000_000L);
        sim.server().deleteByHand(shardLease);
      });
      // 3.5 s: the membership Lease is deleted by hand: the replica hands its shard over (the runner releases and
      // stops) and joins again; the shard's Lease, once released, is deleted by hand again.
      sim.at(3_500_000_000L, () -> {
        sim.server().deleteByHand(memberLease);
        Runnable[] watchRelease = new Runnable[1];
        watchRelease[0] = () -> {
          ShardSimServer.Stored stored = sim.server().stored(shardLease);
          if (stored != null && stored.record().holder() == null) {
            sim.server().deleteByHand(shardLease);
            deletedAfterRelease[0] = true;
          } else if (sim.now() < 5_500_000_000L) {
            sim.at(sim.now() + 1_000_000L, watchRelease[0]);
          }
        };
        sim.at(sim.now() + 1_000_000L, watchRelease[0]);
      });
    });
    return new Outcome(repeats, terms[0], deletedAfterRelease[0]);
  }

  /**
   * Seed 1: the replica takes the shard under token 0, creates it again under 1 after the first deletion (its view
   * lagging), releases it when its membership is lost, and its next runner creates the deleted Lease again.
   */
  @Example
  void aReplicaNeverRepeatsATokenItWroteItself() {
    for (long seed = 1; seed <= 5; seed++) {
      Outcome outcome = run(seed);
      assertThat(outcome.deletedAfterRelease()).as("seed " + seed + ": the released Lease deleted").isTrue();
      assertThat(outcome.terms()).as("seed " + seed + ": terms").isGreaterThanOrEqualTo(3);
      assertThat(outcome.repeats()).as("seed " + seed).isEmpty();
    }
  }
}
