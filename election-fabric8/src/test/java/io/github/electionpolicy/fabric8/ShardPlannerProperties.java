package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link ShardPlanner}'s properties over generated views, each a check of {@link ShardPlannerChecks} (where the
 * cluster model of rounds is described), shrunk by jqwik to a smallest view when one fails.
 * {@link ShardPlannerBrokenVariantsTest} shows every check failing on a planner with a deliberate defect.
 */
class ShardPlannerProperties {

  private static final ShardPlanner PLANNER = ShardPlanner.FAIR;

  @Provide
  Arbitrary<ShardView> views() {
    return ShardScenarios.anyView();
  }

  @Provide
  Arbitrary<ShardView> fairViews() {
    return ShardScenarios.fairView();
  }

  /** Keep and hand over what it holds, take only free shards, never past ceil(S/M); outside the set, nothing. */
  @Property
  void everyPlanStaysWithinFairShareAndTakesOnlyFreeShards(@ForAll("views") ShardView view) {
    assertThat(ShardPlannerChecks.plansStayWithinFairShare(PLANNER, view)).isEmpty();
  }

  /** (a) Fair after at most 2 rounds, or 1 after the departed holders' Leases expired, and stable then. */
  @Property
  void everyViewConvergesToFairShareWithinTheBound(@ForAll("views") ShardView view,
      @ForAll @IntRange(min = 0, max = 3) int expiry) {
    assertThat(ShardPlannerChecks.convergesWithinBound(PLANNER, view, expiry)).isEmpty();
  }

  /** (b) A join moves shards from old members to the newcomer only, no more than it ends with. */
  @Property
  void aJoinMovesOnlyTheShardsTheNewcomerNeeds(@ForAll("fairViews") ShardView fair,
      @ForAll("names") String newcomer) {
    assertThat(ShardPlannerChecks.joinMovesOnlyWhatTheNewcomerNeeds(PLANNER, fair,
        ShardScenarios.newcomer(fair, newcomer))).isEmpty();
  }

  @Provide
  Arbitrary<String> names() {
    return net.jqwik.api.Arbitraries.strings().withCharRange('a', 'g').ofMinLength(1).ofMaxLength(2);
  }

  /** (b) A graceful leave moves only the leaver's shards. */
  @Property
  void aGracefulLeaveMovesOnlyTheLeaversShards(@ForAll("fairViews") ShardView fair,
      @ForAll @IntRange(min = 0, max = ShardScenarios.MAX_MEMBERS - 1) int leaver) {
    assertThat(ShardPlannerChecks.leaveMovesOnlyTheLeaversShards(PLANNER, fair,
        fair.live().get(leaver % fair.live().size()), true, 0)).isEmpty();
  }

  /** (b), (d) A crash moves only the crashed member's shards, and only once its Leases expired. */
  @Property
  void aCrashMovesOnlyTheCrashedMembersShardsOnceItsLeasesExpired(@ForAll("fairViews") ShardView fair,
      @ForAll @IntRange(min = 0, max = ShardScenarios.MAX_MEMBERS - 1) int leaver,
      @ForAll @IntRange(min = 1, max = 3) int expiry) {
    assertThat(ShardPlannerChecks.leaveMovesOnlyTheLeaversShards(PLANNER, fair,
        fair.live().get(leaver % fair.live().size()), false, expiry)).isEmpty();
  }

  /** (c) Two members planning from the same view never plan to take the same shard. */
  @Property
  void twoMembersNeverPlanToTakeTheSameShard(@ForAll("views") ShardView view) {
    assertThat(ShardPlannerChecks.takesAreDisjoint(PLANNER, view)).isEmpty();
  }

  /** (e) Same view, same plan, whatever order the view's collections iterate in. */
  @Property
  void theSameViewGivesTheSamePlan(@ForAll("views") ShardView view, @ForAll long seed) {
    assertThat(ShardPlannerChecks.isDeterministic(PLANNER, view, seed)).isEmpty();
  }
}
