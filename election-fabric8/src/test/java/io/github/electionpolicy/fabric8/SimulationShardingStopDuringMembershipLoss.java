package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Example;

/**
 * Finding (h-simloss, a sweep of {@link SimulationSharding} from base seed 1001 with 3,000,000 steps, once replicas
 * whose loss policy stops them were drawn): a {@link LossHandler} that answered {@code STOP} did not stop the replica
 * when its membership Lease lapsed in the same fault. Seed 1015 (3 replicas, 32 shards, lease 1 s, renew deadline
 * 690 ms; replica-0's slot runs a handler that answers {@code STOP}): the API server is down from 725 to 1,280 ms, and
 * every renewal of replica-0 fails (503), of its shard Leases and of its membership Lease alike. Shard 18's term is
 * lost at its renew deadline, its work stops and the handler answers {@code STOP} (1,326.7 ms); but the membership
 * Lease lapsed too, and the coordinator closes every shard runner on the membership's loss: the close reaches shard
 * 18's runner while its loss is being handled, and by the lifecycle's rule "a close during a loss answers the loss"
 * ({@link RunnerLifecycleClosing}: the handler's answer no longer matters) the runner stopped {@code CLOSED}, not {@code
 * LOST} (its log: "Lost Lease sim/orders-shard-18 ... Stopped 1 reconciler(s) ... Stopped replica-0 (CLOSED)"), so
 * ShardDriver's LOST branch never runs. The replica joins again and starts the work of 10 shards from 1,424 ms on
 * ({@code loss_stops} violations: "starts shard 31's work after its loss policy said not to contend again"). The
 * same rule was the known gap docs/sharding.md stated for a foreign write; a fault that loses the membership Lease
 * with the shards' (an outage, a partition) is the common way there. Fixed by a lifecycle rule: the owner's close
 * ({@link RunnerLifecycleInput.OwnerCloseRequested}, the coordinator's, not the user's) yields to the loss policy's
 * answer, so the runner stops {@code LOST} and the replica leaves (red before: 11 violations).
 */
class SimulationShardingStopDuringMembershipLoss {

  @Example
  void aHandlersStopDuringAnOutageThatAlsoLapsedTheMembershipMakesTheReplicaLeave() {
    ShardSim.Result result = ShardSim.run(ShardSim.config(1015L, ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE));
    assertThat(result.config().onLoss(0)).isEqualTo(ShardSim.OnLoss.STOP);
    assertThat(result.checks().lossStops).as("losses under a policy that stops the replica").isPositive();
    assertThat(result.checks().violations).as(result.config().toString()).isEmpty();
  }
}
