package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * {@link ShardCoordinator}'s properties over a cluster of coordinators fed one shared view by a Lease arbiter, with
 * membership churn ({@link ShardCluster}, where the model and the bounds are described). Each property is one
 * list of {@link ShardCluster.Report}; {@link ShardCoordinatorBrokenVariantsTest} shows each failing on a
 * coordinator with a deliberate defect.
 */
class ShardCoordinatorProperties {

  private static ShardCluster.Report run(long seed) {
    return ShardCluster.run(seed, ShardCoordinator.Flaw.NONE);
  }

  /** No shard's work ever runs in two runners at once (two replicas, or two runners of one). */
  @Property(tries = 300)
  void neverTwoOwnersOfOneShard(@ForAll long seed) {
    assertThat(run(seed).overlaps()).isEmpty();
  }

  /** A replica never has two runners for one shard. */
  @Property(tries = 300)
  void neverTwoRunnersForOneShardInOneReplica(@ForAll long seed) {
    assertThat(run(seed).doubleRunners()).isEmpty();
  }

  /** A live member hands over a shard it owns only once the live set has been unchanged for the settle time. */
  @Property(tries = 300)
  void surplusHandOversWaitForMembershipToSettle(@ForAll long seed) {
    assertThat(run(seed).earlyHandOvers()).isEmpty();
  }

  /** The membership Lease is released only once every shard runner of its holder stopped. */
  @Property(tries = 300)
  void membershipIsReleasedOnlyAfterEveryShardRunnerStopped(@ForAll long seed) {
    assertThat(run(seed).earlyLeaves()).isEmpty();
  }

  /** Fair share (floor or ceil of S/M, every shard held by a live member) within the bound after churn settles. */
  @Property(tries = 300)
  void fairShareWithinTheBoundOnceMembershipSettles(@ForAll long seed) {
    assertThat(run(seed).unfair()).isEmpty();
  }

  /** A coordinator knows the fencing token of exactly the terms its shard runners hold, and no other. */
  @Property(tries = 300)
  void theTokensAreThoseOfTheTermsHeld(@ForAll long seed) {
    assertThat(run(seed).wrongTokens()).isEmpty();
  }

  /** No shard stays free beyond the bound while a member exists. */
  @Property(tries = 300)
  void noShardStaysFreeBeyondTheBound(@ForAll long seed) {
    assertThat(run(seed).longFree()).isEmpty();
  }
}
