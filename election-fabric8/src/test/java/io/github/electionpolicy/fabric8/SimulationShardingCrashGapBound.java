package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Disabled;
import net.jqwik.api.Example;

/**
 * Finding (random base seeds of {@link SimulationSharding}, review h-attack): a shard whose owner crashed has a new
 * owner within the crash bound.
 *
 * <p>Seed 1208311473: 4 replicas at first, 16 shards, lease 1 s, renew deadline 630 ms, retry 201 ms, 22 faults until
 * 22 s. Shards 3, 11 and 14 have had no owner from 12.939 s to 14.080 s: 1140 ms, over the crash bound of 1139 ms.
 */
class SimulationShardingCrashGapBound {

  @Example
  @Disabled("Finding: red because shards 3, 11 and 14 have no owner from 12.939 s to 14.080 s, 1140 ms, 1 ms over "
      + "the crash bound of 1139 ms (ShardSimChecks). Red on main and on 94472ae^ alike; not diagnosed in the time "
      + "of review h-attack: either the bound misses a term of the take's path (a latency, a retry tick) or a take "
      + "came one step late: replay ShardSim.run(config(1208311473)) and read the journal of shard 3 from 12.9 s")
  void aShardWhoseOwnerCrashedHasANewOwnerWithinTheCrashBound() {
    ShardSim.Result result = ShardSim.run(ShardSim.config(1208311473L, ShardCoordinator.Flaw.NONE,
        ShardDriverFlaw.NONE));
    assertThat(result.checks().violations).as(result.config().toString()).isEmpty();
  }
}
