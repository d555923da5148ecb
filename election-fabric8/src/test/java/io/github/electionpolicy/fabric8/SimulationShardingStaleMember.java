package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Example;

/**
 * Finding (random base seeds of {@link SimulationSharding}): a restarted replica hands shards over by name to a member
 * that ended seconds before, whose membership Lease its first list showed, so those shards wait a whole lease duration
 * after the faults ended and the replica misses its fair share.
 *
 * <p>Seed 323011228: 3 replicas, 16 shards, lease 1 s, renew deadline 610 ms, retry 134 ms, faults until 11 s. At
 * 5.5 s replica-1 (process p5) is scaled down while its API server is down: it dies without releasing or deleting its
 * membership Lease, last renewed at 4.78 s ({@code orders-member-replica-1}, rv553), and no process of that identity
 * runs again; the Lease stays on the server. In the fault phase a stop of replica-0's hangs (shard 0, 10.74 s); at
 * 12.74 s its stop timeout abandons it, replica-0 leaves ({@code SHARD_ABANDONED}), hands its shards to replica-3 and
 * exits; its pod restarts it a lease duration later (replica-0/p5, 13.86 s). That process's first list shows
 * replica-1's Lease, and, judged on its own clock as any Lease first seen, replica-1 is live to it until a lease
 * duration has passed with no change (about 14.86 s): its live set is {replica-0, replica-1, replica-3}, while
 * replica-3's is {replica-0, replica-3}. At 14.17 s replica-3 (8 each for two) hands shards 1, 4, 5, 6, 7, 8, 10 and
 * 13 over by name to replica-0; replica-0 (16 over three: quota 6) takes 7 of them in, declines shard 7, and, its live
 * set settled, hands its surplus 1 and 4 over by name to replica-1, proof rv553 (journal: {@code 14201.613 server
 * orders-shard-1 replica-1 t12}, {@code 14216.524 server orders-shard-4 replica-1 t9}). Nobody takes a term written
 * for replica-1 in: shards 1 and 4 wait until that term's lease duration has passed, and replica-0 takes them at
 * 15.25 and 15.27 s. At 15.08 s, the fairness bound after the faults' end, shards 1 and 4 have no owner: {@code
 * replica-0/p5=[5, 6, 7, 8, 10, 13] replica-3/p3=[0, 2, 3, 9, 11, 12, 14, 15]}.
 *
 * <p>Fixed: a live member whose membership Lease the view has not seen change since it first saw it is unconfirmed
 * ({@link ShardCoordinatorInput.ViewObserved#unconfirmedMembers}); while the live set has one, a member keeps what it
 * holds and is handed (no surplus hand-over, no decline), and no hand-over names one. Red before.
 */
class SimulationShardingStaleMember {

  @Example
  void aRestartedReplicaHandsNothingOverToAMemberItNeverSawRenew() {
    ShardSim.Result result = ShardSim.run(ShardSim.config(323011228L, ShardCoordinator.Flaw.NONE,
        ShardDriverFlaw.NONE));
    assertThat(result.checks().violations).as(result.config().toString()).isEmpty();
  }
}
