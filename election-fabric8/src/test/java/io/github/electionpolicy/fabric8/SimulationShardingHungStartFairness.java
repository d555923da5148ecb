package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Example;

/**
 * Finding (random base seeds of {@link SimulationSharding}): the fair-share check counted its bound from the faults'
 * end, though a callback the fault phase hung ({@link ShardSim#hungDelay}: 2 % of them wait the stop timeout and up
 * to three lease durations more) outlasts it: the check's to fix, not the runner's.
 *
 * <p>Seed 27182908 (found with base 27182818): 5 replicas at first, 32 shards, lease 1 s, retry 207 ms, faults until
 * 18 s, so the check was due at 22,656 ms. At 17,441 ms replica-3-2 takes shard 26 back (token 6); its {@code start}
 * waits for a pool thread past the stop timeout (a hung callback), so shard 26 is owned by no one. Once membership
 * settled after the faults, its plan hands shard 26 over; the stop is queued on the same lane behind that start, so it
 * outlives the stop timeout, and the runner leaves the Lease to expire ("Services did not stop within 2s"), as
 * docs/sharding.md states for a stop that does so (a closing runner holds the Lease until its start has run, which
 * the gap bounds already leave out as a pool wait). Replica-0-1 takes it when it has expired, at 23,020 ms: at 22,660
 * ms the check found 31 of the 32 shards owned, shard 26 not. Seeds 161464862233 (shard 42, a start hung
 * from 16,349 ms, faults until 17 s), 1051729844841 (shard 1, from 19,176 ms, until 20 s) and 91000860 (shard 44, from
 * 20,804 ms, until 21 s) failed the same way before the late-renewal fix ({@code SimulationShardingLateRenewal})
 * changed their schedules.
 *
 * <p>Fixed in the check: the fair share is due {@link ShardSimChecks#fairnessBoundNanos} after the faults' end or
 * after the last hung callback ran, whichever is later ({@link ShardSimChecks#fairnessDueNanos}), as the gap bounds
 * already count a hung callback as a fault of its own; a run lasts until the check has run for 3 s. Red before (the
 * violation above).
 */
class SimulationShardingHungStartFairness {

  @Example
  void aShardWhoseStartHungInTheFaultsIsFairlySharedOnceThatStartRan() {
    // As found: no replica slot's loss policy stops it (drawn since, this seed's would have two replicas leave).
    ShardSim.Result result = ShardSim.run(ShardSim.config(27182908L, ShardCoordinator.Flaw.NONE,
        ShardDriverFlaw.NONE).withStopSlots(0));
    assertThat(result.checks().violations).as(result.config().toString()).isEmpty();
    ShardSim.Config c = result.config();
    assertThat(result.checks().fairnessDueNanos())
        .as("a callback hung in the faults ran after the old due time")
        .isGreaterThan(c.faultEndNanos() + ShardSimChecks.fairnessBoundNanos(c.leaseNanos(), c.retryNanos()));
  }
}
