package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Example;

/**
 * Finding (random base seeds 161464862175, 710405029 and 91000846 of {@link SimulationSharding}): a member whose last
 * renewal landed after its renew deadline waited its own membership Lease out, and the shards it stopped stayed
 * unowned past the fault bound.
 *
 * <p>Seed 161464862175: 3 replicas at first, 5 shards, lease 1 s, renew deadline 770 ms, retry 192 ms, latency up to
 * 13 ms. The API server is down from 13,115 to 13,621 ms. Replica-5's renewals of its membership Lease fail until the
 * last one before its deadline, sent with what is left of the deadline as its timeout (2 ms): the server stores it
 * ({@code 13727.704 server orders-member-replica-5 replica-5 t0 rv585}), its answer comes too late, and the term is
 * lost at 13,729 ms. Replica-5 stops shard 1 and releases it (13,742 ms), then contends for its membership again: its
 * read shows the Lease under its own identity with a record it had no confirmed write of, which the protocol took for
 * another process's term under the same identity (SAME_IDENTITY_WAITING) and waited out, a whole lease duration. All
 * that time every other replica counted replica-5 live (they saw the renewal), and with five members for five shards
 * kept their quota of one: shard 1 waited for replica-5, then for replica-0-3 (the same at 13,817 ms), and was owned
 * again at 14,821 ms, 1,086 ms after the latest list after the outage, against a fault bound of 1,079 ms (L + 3 rtt),
 * whose reasoning says that a member that lost its membership Lease takes it back at once. Seed 710405029 (16 shards
 * over 6; five of them waited their own Leases out after one outage: four gaps up to 1,082 ms against 1,049 and 1,081
 * ms) and 91000846 (32 shards over 3, a crash gap of 1,067 ms against 1,067 ms) the same way.
 *
 * <p>Fixed in {@link LeaseProtocol}: the renewals of a lost term still in doubt when the process contends again
 * ({@link LeaseProtocolState#lostTermDoubts}) count as its own last term when the Lease shows exactly what one of them
 * wrote, as a take whose answer never came already did: it takes the Lease back at once, a new term conditional on
 * the version it read ({@code LeaseProtocolRecoveryTest.aRenewalThatLandedAfterTheRenewDeadlineIsTakenBackAtOnce}).
 * Red before (the violations above).
 */
class SimulationShardingLateRenewal {

  @Example
  void aMemberWhoseLastRenewalLandedLateTakesItsMembershipBackAtOnce() {
    for (long seed : new long[] {161464862175L, 710405029L, 91000846L}) {
      ShardSim.Result result = ShardSim.run(ShardSim.config(seed, ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE));
      assertThat(result.checks().violations).as("seed %d %s", seed, result.config()).isEmpty();
    }
  }
}
