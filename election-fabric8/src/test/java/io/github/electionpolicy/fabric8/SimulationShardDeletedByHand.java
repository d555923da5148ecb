package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Example;

/**
 * A shard's Lease deleted by hand ({@code kubectl delete lease}) while its owner runs the shard, and the owner then
 * closed (its process later gone). The other replica's list and watch saw the Lease with the owner's fencing token
 * before the deletion; docs/reliability.md: deleting the Lease resets the token only "when no running replica
 * remembers a higher count ... Running replicas remember the highest count they saw and continue above it". The
 * replica that takes the shard once the deleted Lease's lease duration has passed in its view must write a token
 * above the one it saw, not start again at 0 (the simulation's {@code token_regressions}).
 */
class SimulationShardDeletedByHand {

  /** 2 replicas, 1 shard, lease 2 s; at 3 s the shard's Lease is deleted by hand and its owner closed at once. */
  static ShardSim.Result run(long seed) {
    long faultEnd = 6_000_000_000L;
    ShardSim.Config config = new ShardSim.Config(seed, 2, 1, 2, 1400, 300, 466, 2000, 30, faultEnd,
        faultEnd + ShardSimChecks.fairnessBoundNanos(2_000_000_000L, 300_000_000L) + 3_000_000_000L, 0, false,
        ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE);
    return ShardSim.run(config, sim -> sim.at(3_000_000_000L, () -> {
      String lease = ShardSim.LEASE + "-shard-0";
      ShardSimServer.Stored stored = sim.server().stored(lease);
      if (stored == null || stored.record().holder() == null) {
        return;
      }
      String holder = stored.record().holder();
      for (ShardSimReplica replica : sim.replicas()) {
        if (replica.alive && holder.equals(replica.identity)) {
          sim.checks().disturbance(1);
          sim.server().deleteByHand(lease);
          replica.close();
          sim.at(sim.now() + 100_000_000L, () -> sim.checks().disturbance(-1));
          return;
        }
      }
    }));
  }

  /**
   * Seed 5: replica-0 owns shard 0 under token 1, which replica-1's view saw. Red before: replica-1 took the shard at
   * 4,983 ms under token 0 ("shard 0 starts in replica-1/p1 under token 0 after replica-0's 1"): its new shard
   * runner was handed nothing of the deleted Lease, so it counted from nothing.
   */
  @Example
  void aShardLeaseDeletedByHandIsRetakenAboveTheTokenTheViewSaw() {
    ShardSim.Result result = run(5);
    assertThat(result.checks().violations).isEmpty();
  }

  /** Seeds 1 to 30 of the same script, each a different interleaving: none takes a token at or below one seen. */
  @Example
  void noSeedOfTheScriptRegressesTheToken() {
    for (long seed = 1; seed <= 30; seed++) {
      ShardSim.Result result = run(seed);
      assertThat(result.checks().violations).as("seed " + seed).isEmpty();
    }
  }
}
