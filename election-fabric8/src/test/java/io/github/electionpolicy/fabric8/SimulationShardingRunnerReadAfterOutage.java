package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Example;

/**
 * Finding (random base 27182818 of {@link SimulationSharding}, after the late-renewal fix of {@link
 * SimulationShardingLateRenewal}), fixed by review h-gaps: seed 27182917, 4 replicas at first, 32 shards, lease 3 s,
 * retry 448 ms, latency up to 18 ms (fault bound 3,111 ms). The API server is down from 11,637 to 12,000 ms.
 * Replica-0's last renewal of shard 4 is stored at 11,632.7 ms (rv533); it loses shard 4 at its renew deadline
 * (11,677.8 ms, work stopped) and cannot release it (503). A new runner of replica-0's for shard 4 contends from
 * 11,712 ms; its first read fails (the server is down). At 11,950 ms replica-0's list and watch delivers rv533 (held
 * back by a window of delayed watch events) and hands it to the runner as a sighting ({@code LifecycleDriver.sighted}),
 * but the protocol dropped it: it compared the arrival with the time of its last read, unset (0) before a read had
 * answered, and replica-0's clock reads negative (System.nanoTime may). Its next read, at 12,440.7 ms, then dated
 * rv533 (held under its own identity by a record no runner of this process confirmed: waited out), it took the shard
 * at 15,468 ms and its work started at 15,487.8 ms, 3,124 ms after its list and watch listed again (12,356 ms), 13 ms
 * past the bound. Now an unset last read is no time at all (LeaseProtocolState): the sighting dates rv533 at 11,950
 * ms and the work starts at 15,004 ms (LeaseProtocolStepEdgesTest.NegativeClock pins the rule). The checks also
 * counted the fault's clock too early: the delayed watch events of two overlapping windows landed up to 445 ms after
 * the second one's end, not the 92 ms of its own latency ({@link SimulationShardingCrashGapBound}); with either fix
 * alone the seed passes. Red before both, as found.
 */
class SimulationShardingRunnerReadAfterOutage {

  @Example
  void aShardWhoseRunnerReadItAfterTheOutageIsOwnedWithinTheFaultBound() {
    ShardSim.Result result = ShardSim.run(ShardSim.config(27182917L, ShardCoordinator.Flaw.NONE,
        ShardDriverFlaw.NONE));
    assertThat(result.checks().violations).as(result.config().toString()).isEmpty();
  }
}
