package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Disabled;
import net.jqwik.api.Example;

/**
 * Finding (random base seeds of {@link SimulationSharding}, review h-attack): once the faults ended, every shard has an
 * owner and every replica its fair share within the fairness bound.
 *
 * <p>Seed 1208311456: 6 replicas at first, 64 shards, lease 1 s, renew deadline 690 ms, retry 124 ms, 15 faults until
 * 30 s. At 34 s, the fairness bound after the faults' end, one shard has no owner and replica-4-1 (p9) holds 11 of a
 * fair 12 or 13: {@code replica-0/p1=13 replica-2/p1=13 replica-3/p3=13 replica-4-1/p9=11 replica-5/p5=13}.
 */
class SimulationShardingFairShareAfterFaults {

  @Example
  @Disabled("Finding: red because at 34 s, the fairness bound after the faults' end (30 s + 3 leases + 8 retries), "
      + "shard 58 has no owner and replica-4-1/p9 holds 11 of 64 over 5. Red on 94472ae^ as well. Trace (-Dsim.trace): "
      + "the last fault, a PAUSE of replica-4-1/p7 at 28.36 s, made a stop of its shard 17 hang past the 2 s stop "
      + "timeout: SHARD_ABANDONED, and its pod's restart (p9) joined at 32.9 s, after the faults' end; replica-3's runner "
      + "of shard 58, CLOSING from 31 s, last renewed at 32.18 s and never released it; p9 took 58 at 34.026 s, 26 ms "
      + "late (its crash gap, 1063 ms, within its bound). Probably the check's fairness bound, which counts no stop "
      + "timeout nor a process started after the faults' end; not settled in the time of review h-attack")
  void everyShardHasAnOwnerAndEveryReplicaItsShareOnceTheFaultsEnded() {
    ShardSim.Result result = ShardSim.run(ShardSim.config(1208311456L, ShardCoordinator.Flaw.NONE,
        ShardDriverFlaw.NONE));
    assertThat(result.checks().violations).as(result.config().toString()).isEmpty();
  }
}
