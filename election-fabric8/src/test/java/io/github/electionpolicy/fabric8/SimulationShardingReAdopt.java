package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Example;

/**
 * Finding (review h-handover): a replica takes the same hand-over in twice, once with a runner that has since released
 * the shard, and again with a new runner from a view that lags its own writes, so the shard's work runs in two
 * replicas at once.
 *
 * <p>3 replicas, 3 shards, lease 1 s, renew deadline 700 ms, retry 100 ms. At 3 s replica-1's list and watch starts
 * lagging ({@code lag} behind the server) and replica-0 closes: it hands shard 1 over to replica-1 (token 1). Replica-1's
 * runner takes it in; as soon as replica-1 owns two shards its membership Lease is deleted by hand (any loss of the
 * membership Lease that comes before the proof's renew deadline does: deletion, a take by a same-named process).
 * Replica-1 closes its shard runners, which release shard 1 (empty holder): replica-2 takes it at once. Replica-1 joins
 * again (the same membership runner, whose last writes, the proof among them, it still knows), plans from its lagging
 * view, which still shows the hand-over, starts a new runner for shard 1, and that runner, told what the view saw, takes
 * the hand-over in again (its guard against that, {@code LeaseProtocolState.adopted}, is per runner): shard 1's work
 * starts in replica-1 under token 1 while it runs in replica-2 under token 2. On cce3d65: shard overlaps and stale
 * terms for most lags.
 */
class SimulationShardingReAdopt {

  static ShardSim.Result run(long seed, long lagMillis) {
    ShardSim.Config config = new ShardSim.Config(seed, 3, 3, 1, 700, 100, 233, 2000, 5, 6_000_000_000L,
        6_000_000_000L + ShardSimChecks.fairnessBoundNanos(1_000_000_000L, 100_000_000L) + 3_000_000_000L, 0, false,
        ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE);
    boolean[] deleted = new boolean[1];
    return ShardSim.run(config, sim -> {
      ShardSimReplica successor = sim.replicas().get(1);
      sim.at(3_000_000_000L, () -> {
        sim.lagView(successor, lagMillis * 1_000_000L);
        sim.replicas().get(0).close();
      });
      for (long t = 3_000_000_000L; t < 4_500_000_000L; t += 1_000_000L) {
        sim.at(t, () -> {
          if (!deleted[0] && successor.runner != null && successor.runner.ownedShards().size() >= 2) {
            deleted[0] = true;
            sim.server().deleteByHand("orders-member-" + successor.identity);
          }
        });
      }
    });
  }

  @Example
  void aHandOverIsTakenInOnceByAProcessNotAgainByItsNextRunnerFromALaggingView() {
    List<String> failures = new ArrayList<>();
    for (long lag = 100; lag <= 500; lag += 100) {
      for (long seed = 1; seed <= 3; seed++) {
        ShardSim.Result result = run(seed, lag);
        if (!result.checks().violations.isEmpty()) {
          failures.add("seed " + seed + " lag " + lag + ": " + result.checks().violations);
        }
      }
    }
    assertThat(failures).isEmpty();
  }
}
