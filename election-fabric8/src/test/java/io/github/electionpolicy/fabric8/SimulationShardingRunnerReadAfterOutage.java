package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Disabled;
import net.jqwik.api.Example;

/**
 * Finding, not fixed (random base 27182818 of {@link SimulationSharding}, after the late-renewal fix of {@link
 * SimulationShardingLateRenewal}; the same seed passes without that fix, whose schedule differs): seed 27182917, 4
 * replicas at first, 32 shards, lease 3 s, retry 448 ms, latency up to 18 ms (fault bound 3,111 ms). The API server is
 * down from 11,637 to 12,000 ms. Replica-0's last renewal of shard 4 is stored at 11,632.7 ms (rv533); it loses shard 4
 * at its renew deadline (11,677.8 ms, work stopped) and cannot release it (503). Its list and watch lists again after
 * the failure at about 12,356 ms, where the fault bound's clock starts. A runner of replica-0's for shard 4, contending
 * through the outage (reads at 11,712 and 11,950 ms failed, then one every retry period and its jitter), first reads the
 * Lease at 12,440.7 ms: held under its own identity by a record it did not write (no runner of this process confirmed
 * rv533), so it waits a lease duration from that read, reads again at 15,442 ms and takes the shard at 15,468 ms; work
 * starts at 15,487.8 ms, 3,124 ms after the list, 13 ms past the bound. The bound's reasoning has the member's new
 * runner judge the Lease from the view's sighting ({@code LeaseProtocol.seen}); this runner was started before that
 * list, so it judged from its own read, up to a retry period and its jitter after the fault's end. Whether the runner
 * should take its view's later sighting, or the bound should count the runner's read, is open.
 */
class SimulationShardingRunnerReadAfterOutage {

  @Disabled("Finding (seed 27182917), not fixed: red, shard 4 unowned 3,124 ms against a fault bound of 3,111 ms")
  @Example
  void aShardWhoseRunnerReadItAfterTheOutageIsOwnedWithinTheFaultBound() {
    ShardSim.Result result = ShardSim.run(ShardSim.config(27182917L, ShardCoordinator.Flaw.NONE,
        ShardDriverFlaw.NONE));
    assertThat(result.checks().violations).as(result.config().toString()).isEmpty();
  }
}
