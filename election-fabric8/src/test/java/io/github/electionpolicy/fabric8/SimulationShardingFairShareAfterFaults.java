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
  @Disabled("Finding: red because at 34 s, the fairness bound after the faults' end, shard 58 has no owner and "
      + "replica-4-1/p9 holds 11 shards (fair: 12 or 13 of 64 over 5). Red on main and on 94472ae^ alike (the "
      + "unconfirmed-member rule neither caused nor fixed it); not diagnosed in the time of review h-attack: replay "
      + "ShardSim.run(config(1208311456)) and read the journal of shard 58 and replica-4-1 from the last fault on")
  void everyShardHasAnOwnerAndEveryReplicaItsShareOnceTheFaultsEnded() {
    ShardSim.Result result = ShardSim.run(ShardSim.config(1208311456L, ShardCoordinator.Flaw.NONE,
        ShardDriverFlaw.NONE));
    assertThat(result.checks().violations).as(result.config().toString()).isEmpty();
  }
}
