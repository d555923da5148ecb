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
  @Disabled("Finding: red because shards 3, 11 and 14 of replica-3, crashed at 12.939 s, have no owner at 14.080 s: "
      + "1140 ms, over the crash bound L + L/1000 + 3 rtt = 1139 ms (ShardSimChecks.gapBounds). Red on 94472ae^ as "
      + "well. Trace (-Dsim.trace): replica-3 last renewed shard 3 at 12.863 s and its membership at 12.854 s; replica-4 "
      + "took its planned shards 6 and 9 at 13.97 s (gaps 1029 and 1041 ms), but shards 3, 11 and 14, planned for others "
      + "only once replica-3's membership expired in their views (about 13.88 s), were read at 14.06-14.10 s and taken "
      + "at 14.09-14.14 s: about one retry period (201 ms) after that expiry, which the bound has no term for. Either "
      + "the take after a member's expiry waits a retry tick it need not, or the bound misses that term; not settled in "
      + "the time of review h-attack")
  void aShardWhoseOwnerCrashedHasANewOwnerWithinTheCrashBound() {
    ShardSim.Result result = ShardSim.run(ShardSim.config(1208311473L, ShardCoordinator.Flaw.NONE,
        ShardDriverFlaw.NONE));
    assertThat(result.checks().violations).as(result.config().toString()).isEmpty();
  }
}
