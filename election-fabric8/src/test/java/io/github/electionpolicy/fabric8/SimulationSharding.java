package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Example;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * The deterministic simulation of the real {@link ShardedRunner} (its driver, coordinator, view, and a real {@link
 * LifecycleDriver} per Lease): 2 to 6 replicas, 1 to 64 shards, over a simulated API server with many Leases, under
 * network faults, pauses and membership churn ({@link ShardSim}), the invariants of {@link ShardSimChecks} checked
 * at every instant. Each run is drawn from its seed alone: a failing seed is printed and replays it ({@code
 * -Dsim.trace=true} prints its journal).
 *
 * <p>Every build runs at least {@code sharding.steps} replica events (loop tasks, timers and callback runs),
 * 1,000,000 by default, and its broken variants; one line sums it up: {@code SHARDING schedules=...
 * replica_steps=... shard_overlaps=0 fairness_violations=0 ownership_gaps=0 max_graceful_gap_ms=... (P% of bound,
 * n=...) ... takes_given_up=... gap_bounds=[...] broken_variants_caught=K/K}, the gap bounds as formulas
 * ({@link ShardSimChecks#gapBounds}). Each list of a replica's list and watch reaches its runner one Lease at a time,
 * as fabric8's informer reports it, and {@code partial_list_plans} counts replicas that contended for a shard held by
 * a live member while their first list was still being reported ({@link ShardSimChecks#contends}); the broken
 * variant {@code SYNCED_AT_FIRST_LEASE} (the view counted as listed at its first Lease, as before the first-list fix)
 * is caught by it alone. Some replica slots of a run (each one time in four, {@link ShardSim#stopSlots}) run a loss
 * policy that stops the replica (a handler's {@code STOP}, or an {@code EXIT} whose exiter returns); {@code
 * loss_stops} counts their losses, how many of them left, the longest leave and its share of its bound, and the
 * violations of what such a replica must do ({@link ShardSimChecks#lossStop}); the broken variant {@code
 * LOSS_RECONTENDS} (the replica contends again instead of leaving, as before review r1's fix) is caught by them.
 */
class SimulationSharding {

  static final long STEPS = Long.getLong("sharding.steps", 1_000_000L);
  static final int TRIES = Integer.getInteger("sharding.tries", 60);
  /**
   * Runs a broken variant gets to be caught in. HAND_OVER_DATED_AT_SIGHT is the slowest now: run 57, by a gap 6 ms over
   * the crash bound (before review h-decline's fix, run 2, by an overlap that the re-adoption of a declined hand-over
   * caused). (HANDS_OVER_BEFORE_SETTLE, once the slowest, is unobserved: see UNOBSERVABLE.)
   */
  static final int BROKEN_VARIANT_BUDGET = 60;

  static final int MIN_SCHEDULES = 20;
  static final long BASE_SEED = Long.getLong("sharding.seed", 20261202L);
  static final long BROKEN_VARIANT_SEED = 20260101L;
  /**
   * The coordinator's broken variants this level does not observe, each masked by a guard below it: the driver drops
   * a shard's term from what the replica answers at the hand-over, whatever the coordinator's tokens say
   * (TOKEN_KEPT_WHILE_HANDING_OVER); a lapsed member carrying on only moves work between owners, each move
   * still under a shard Lease (IGNORES_MEMBERSHIP_LOSS). The coordinator's own properties
   * (ShardCoordinatorBrokenVariantsTest) catch them. Early hand-overs (HANDS_OVER_BEFORE_SETTLE) also move work
   * only under shard Leases: this level caught them (run 23 of the budget) only by an overlap that was no part of the
   * flaw, a hand-over declined and then taken in again by the next runner of the same process (review h-decline,
   * SimulationShardingDeclineReAdopt); with that fixed, the first of these runs it fails is run 163, by a gap 6 ms over
   * the crash bound, so it counts as unobserved here and ShardCoordinatorBrokenVariantsTest catches it. A successor that dates a hand-over from its own sight of it
   * (HAND_OVER_DATED_AT_SIGHT) is masked by membership (its shard work stops when its membership Lease is lost, and no
   * replica takes a live member's shard): this level caught it at run 2 only by the same declined-then-taken-in overlap,
   * then at run 57, and not within the budget once a runner holding a hand-over looks again at each answer of its
   * membership's renewals (more hand-overs taken in, fewer waited out); SimulationShardHandOverDating shows it run a
   * shard twice once the membership guard is broken as well, and LeaseProtocolHandOverStepTest catches it at the
   * protocol.
   */
  static final List<Broken> UNOBSERVABLE = List.of(Broken.TOKEN_KEPT_WHILE_HANDING_OVER,
      Broken.IGNORES_MEMBERSHIP_LOSS, Broken.HANDS_OVER_BEFORE_SETTLE, Broken.HAND_OVER_DATED_AT_SIGHT);
  /** How many runs confirm that an unobserved variant stays unobserved (each costs a full run). */
  static final int UNOBSERVED_BUDGET = 5;

  private static final Totals TOTALS = new Totals();

  /** The broken variants: the coordinator's flaws observable here, and the driver's own. */
  enum Broken {
    CONTENDS_BEFORE_STOPPED(ShardCoordinator.Flaw.CONTENDS_BEFORE_STOPPED, ShardDriverFlaw.NONE),
    LEAVES_BEFORE_SHARDS_STOPPED(ShardCoordinator.Flaw.LEAVES_BEFORE_SHARDS_STOPPED, ShardDriverFlaw.NONE),
    TOKEN_KEPT_WHILE_HANDING_OVER(ShardCoordinator.Flaw.TOKEN_KEPT_WHILE_HANDING_OVER, ShardDriverFlaw.NONE),
    HANDS_OVER_BEFORE_SETTLE(ShardCoordinator.Flaw.HANDS_OVER_BEFORE_SETTLE, ShardDriverFlaw.NONE),
    IGNORES_MEMBERSHIP_LOSS(ShardCoordinator.Flaw.IGNORES_MEMBERSHIP_LOSS, ShardDriverFlaw.NONE),
    STOPPED_COUNTS_AS_RELEASED(ShardCoordinator.Flaw.NONE, ShardDriverFlaw.STOPPED_COUNTS_AS_RELEASED),
    SIGHTING_DATED_AT_CONTEND(ShardCoordinator.Flaw.NONE, ShardDriverFlaw.SIGHTING_DATED_AT_CONTEND),
    SYNCED_AT_FIRST_LEASE(ShardCoordinator.Flaw.NONE, ShardDriverFlaw.SYNCED_AT_FIRST_LEASE),
    HAND_OVER_DATED_AT_SIGHT(ShardCoordinator.Flaw.NONE, ShardDriverFlaw.HAND_OVER_DATED_AT_SIGHT),
    LOSS_RECONTENDS(ShardCoordinator.Flaw.NONE, ShardDriverFlaw.LOSS_RECONTENDS);

    final ShardCoordinator.Flaw flaw;
    final ShardDriverFlaw driverFlaw;

    Broken(ShardCoordinator.Flaw flaw, ShardDriverFlaw driverFlaw) {
      this.flaw = flaw;
      this.driverFlaw = driverFlaw;
    }
  }

  /** The runs of the real runner, seed after seed, until they made {@link #STEPS} replica events. */
  @Example
  void theRealShardedRunnerKeepsEveryInvariant() {
    List<String> failures = new ArrayList<>();
    long seed = BASE_SEED;
    while (TOTALS.steps < STEPS || TOTALS.schedules < MIN_SCHEDULES) {
      ShardSim.Result result = ShardSim.run(ShardSim.config(seed, ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE));
      TOTALS.add(result);
      if (!result.checks().passed()) {
        failures.add("seed " + seed + " " + result.config() + ": " + result.checks().violations);
      }
      seed++;
    }
    assertThat(failures).as("runs of the real sharded runner with a violation (replay: ShardSim.run(config(seed)))")
        .isEmpty();
    assertThat(TOTALS.membershipDeletes).as("closed replicas' membership Leases deleted after their release")
        .isPositive();
  }

  /**
   * Literal replay of the first failure the simulation found (seed 3): a replica closed and restarted under the same
   * identity (a StatefulSet's pod) kept the leaving mark on its membership Lease (a write keeps the annotations it
   * does not set), so the others counted it out for good: it held its membership and never got a share.
   */
  @Example
  void aReplicaRestartedUnderItsIdentityAfterACloseGetsItsShare() {
    ShardSim.Config config = new ShardSim.Config(3, 2, 4, 1, 700, 200, 233, 2000, 5, 6_000_000_000L,
        6_000_000_000L + ShardSimChecks.fairnessBoundNanos(1_000_000_000L, 200_000_000L) + 3_000_000_000L, 0, false,
        ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE);
    ShardSim.Result result = ShardSim.run(config, sim -> sim.at(2_000_000_000L, () -> ShardSimFaults.fault(sim,
        ShardSimFaults.Kind.RESTART, sim.replicas().get(1), 0, 500_000_000L, 0, 0)));
    assertThat(result.checks().violations).isEmpty();
    assertThat(result.checks().handOvers).as("the restart handed its shards over").isPositive();
    // At least the closed process's delete; how many deletes a schedule sends depends on the timings (two, since a
    // runner takes a Lease its view shows released without reading it first). A delete of a newer record, and a
    // released membership Lease left on the server, are violations: checked above.
    assertThat(result.checks().membershipDeletes).as("the closed process's membership Lease deleted").isPositive();
  }

  /**
   * Finding (review h-attack13), fixed (h-outage): the gap bounds left out how long a list and watch takes to list
   * again after an outage. Seed 777083 (3 replicas, 5 shards, lease 1 s): the API server is down from 9,051 to
   * 10,051 ms; meanwhile a rolling update closes replica-3 (its release cannot be sent) and starts replica-3-1, whose
   * list and watch cannot list yet. It listed only at its informer's next retry after the outage (the simulation's
   * informer then retried every 500 ms: at 10,500 ms), and from then counted replica-3's silent membership Lease as
   * live for a lease duration: with four members in its view its quota was one shard, and a shard freed by
   * replica-3's stop stayed unowned past the fault bound (L + 3 rtt from the outage's end). Seeds 555163, 555314,
   * 555327 (from {@code -Dsharding.seed=555000 -Dsharding.steps=10000000}) and 31337191 (from seed 31337000) exceeded
   * a crash or fault bound the same way, by 3 to 12 ms. Fixed in three parts. The runner lists again at once when
   * the API server answers one of its Lease calls after its list and watch failed ({@link ShardViewFeed#answered},
   * once per failure; production's {@link ShardLeaseSource#relist}). The simulation's informer follows production's
   * back-off (a 32nd of the retry period, doubling up to it) instead of retrying every 500 ms. And since the first
   * answer may itself come up to a retry period after the fault (each runner calls once a retry period), the bounds
   * count a fault's clock from the latest first list of a list and watch that failed, as docs/sharding.md says;
   * {@link ShardSimChecks#listedAfterFailure} checks that list's wait ({@code late_lists}: within the back-off's cap
   * and a round trip of the fault's end, and within a round trip of the first answer after the failure). Red before
   * (777083: 1,328 ms against 1,309 ms); with the early relist alone, 555314 and 31337191 still overran by 3 and 6
   * ms; with the back-off and the bounds' clock but no early relist, these five pass, and the default run's
   * {@code late_lists} check fails instead (3 of 32 schedules, lists up to 439 ms after the first answer).
   */
  @Example
  void aShardFreedByAnOutageIsOwnedWithinTheBoundWhenAReplicaStartedDuringIt() {
    for (long seed : new long[] {777083L, 555163L, 555314L, 555327L, 31337191L}) {
      // As found: no replica slot's loss policy stops it (drawn since, one replica of 555163 would leave).
      ShardSim.Result result = ShardSim.run(ShardSim.config(seed, ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE)
          .withStopSlots(0));
      assertThat(result.checks().violations).as("seed %d", seed).isEmpty();
    }
  }

  /**
   * Finding (h-relist): a relist or restart whose own list was left unanswered (fabric8 7.x, no failure, no retry)
   * was never restarted again, since the silence check skipped a view while a relist was on its way. Modelled by
   * {@link ShardSimFaults#scheduleUnansweredLists}; in each of these seeds a replica's view, dropped at the window's
   * start, lists into it and hangs: before the fix its view stayed as it was for good and the quiet phase found an
   * unfair share (20261212: 3 shards over 4 members, 20261214: 64 over 6, 20261225: 32 over 4), with no view
   * restarted; now the silence check restarts it once the window is over.
   */
  @Example
  void aReplicaWhoseListIsLeftUnansweredIsListedAgainAndSharesFairly() {
    int restarted = 0;
    for (long seed : new long[] {20261212L, 20261214L, 20261225L}) {
      ShardSim.Result result = ShardSim.run(ShardSim.config(seed, ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE));
      assertThat(result.checks().violations).as("seed %d", seed).isEmpty();
      assertThat(result.checks().unansweredLists).as("seed %d: lists left unanswered", seed).isPositive();
      restarted += result.checks().viewRestarts > 0 ? 1 : 0;
    }
    // Which of them hangs a view for good depends on the whole schedule (the hand-over by name changed 20261214's):
    // at least one does, and its view is restarted.
    assertThat(restarted).as("seeds whose views were restarted").isPositive();
  }

  /** Each broken variant, run over the seeds from a fixed one, must be caught within its budget. */
  @Example
  void everyBrokenVariantIsCaught() {
    Map<Broken, Integer> caughtAfter = new LinkedHashMap<>();
    Map<Broken, String> how = new LinkedHashMap<>();
    List<Broken> missed = new ArrayList<>();
    for (Broken variant : Broken.values()) {
      int tried = 0;
      int budget = UNOBSERVABLE.contains(variant) ? UNOBSERVED_BUDGET : BROKEN_VARIANT_BUDGET;
      while (tried < budget) {
        ShardSim.Result result = ShardSim.run(ShardSim.config(BROKEN_VARIANT_SEED + tried, variant.flaw,
            variant.driverFlaw));
        tried++;
        if (!result.checks().passed()) {
          caughtAfter.put(variant, tried);
          how.put(variant, result.checks().violations.get(0));
          break;
        }
      }
      if (!caughtAfter.containsKey(variant)) {
        missed.add(variant);
      }
    }
    TOTALS.caught = caughtAfter.size();
    TOTALS.variants = Broken.values().length - UNOBSERVABLE.size();
    System.out.println("sharding broken variants caught after n runs: " + caughtAfter);
    how.forEach((variant, first) -> System.out.println("  " + variant + ": " + first));
    System.out.println("sharding broken variants not caught: " + missed + " (expected: " + UNOBSERVABLE + ")");
    assertThat(missed).as("broken variants no invariant caught within %d runs", BROKEN_VARIANT_BUDGET)
        .containsExactlyInAnyOrderElementsOf(UNOBSERVABLE);
  }

  @AfterContainer
  static void report() {
    System.out.println(TOTALS.line());
    System.out.println("sharding lines covered: " + SimulationCoverage.perClass(SimulationCoverage.SHARDING));
    if (TOTALS.schedules > 0 && TOTALS.steps < STEPS) { // not when one replay was asked for alone
      throw new AssertionError("the sharding simulation ran " + TOTALS.steps + " replica events, fewer than "
          + "sharding.steps=" + STEPS);
    }
  }

  /** What every run adds up to. */
  static final class Totals {
    long schedules;
    long steps;
    long overlaps;
    long tokens;
    long stale;
    long early;
    long fairness;
    long gaps;
    long takesGivenUp;
    long viewRestarts;
    long unansweredLists;
    int maxGivenUp;
    long handOvers;
    long handOversWritten;
    long handOversTakenIn;
    long membershipDeletes;
    long newerDeleted;
    long cleanCloses;
    long membershipLeasesLeft;
    long lateLists;
    long partialListPlans;
    long listsAfterFailure;
    long maxListWaitNanos;
    long lossStops;
    long lossLeaves;
    long maxLossLeaveNanos;
    double maxLossLeaveShare;
    long lossStopViolations;
    final long[] maxGapNanos = new long[ShardSimChecks.GapKind.values().length];
    final double[] maxGapShare = new double[ShardSimChecks.GapKind.values().length];
    final long[] gapsMeasured = new long[ShardSimChecks.GapKind.values().length];
    int caught;
    int variants;

    synchronized void add(ShardSim.Result result) {
      ShardSimChecks c = result.checks();
      schedules++;
      steps += result.replicaSteps();
      overlaps += c.shardOverlaps;
      tokens += c.tokenRegressions;
      stale += c.staleTerms;
      early += c.earlyLeaves;
      fairness += c.fairnessViolations;
      gaps += c.ownershipGaps;
      takesGivenUp += c.takesGivenUp;
      viewRestarts += c.viewRestarts;
      unansweredLists += c.unansweredLists;
      maxGivenUp = Math.max(maxGivenUp, c.maxGivenUp);
      handOvers += c.handOvers;
      handOversWritten += c.handOversWritten;
      handOversTakenIn += c.handOversTakenIn;
      membershipDeletes += c.membershipDeletes;
      newerDeleted += c.newerDeleted;
      cleanCloses += c.cleanCloses;
      membershipLeasesLeft += c.membershipLeasesLeft;
      lateLists += c.lateLists;
      partialListPlans += c.partialListPlans;
      listsAfterFailure += c.listsAfterFailure;
      maxListWaitNanos = Math.max(maxListWaitNanos, c.maxListWaitNanos);
      lossStops += c.lossStops;
      lossLeaves += c.lossLeaves;
      maxLossLeaveNanos = Math.max(maxLossLeaveNanos, c.maxLossLeaveNanos);
      maxLossLeaveShare = Math.max(maxLossLeaveShare, c.maxLossLeaveShare);
      lossStopViolations += c.lossStopViolations;
      for (int k = 0; k < maxGapNanos.length; k++) {
        maxGapNanos[k] = Math.max(maxGapNanos[k], c.maxGapNanos[k]);
        maxGapShare[k] = Math.max(maxGapShare[k], c.maxGapShare[k]);
        gapsMeasured[k] += c.gapsMeasured[k];
      }
    }

    /**
     * Per kind of gap: the longest, counted as its bound counts it, its largest share of its run's bound, and how
     * many were measured at their end; then the bounds' formulas.
     */
    private String gaps() {
      StringBuilder line = new StringBuilder();
      for (ShardSimChecks.GapKind kind : ShardSimChecks.GapKind.values()) {
        String name = kind.name().toLowerCase(java.util.Locale.ROOT);
        int k = kind.ordinal();
        line.append(" max_").append(name).append("_gap_ms=").append(maxGapNanos[k] / 1_000_000).append(" (")
            .append(Math.round(100 * maxGapShare[k])).append("% of bound, n=").append(gapsMeasured[k]).append(')');
      }
      return line.append(" takes_given_up=").append(takesGivenUp).append(" (at most ").append(maxGivenUp)
          .append(" in one gap)").append(" gap_bounds=[")
          .append(ShardSimChecks.GapBounds.FORMULAS).append(']').toString();
    }

    synchronized String line() {
      return "SHARDING schedules=" + schedules + " replica_steps=" + steps + " shard_overlaps=" + overlaps
          + " token_regressions=" + tokens + " stale_terms=" + stale + " early_leaves=" + early
          + " fairness_violations=" + fairness + " ownership_gaps=" + gaps + " stops=" + handOvers
          + " named_hand_overs=" + handOversWritten + " (taken in unwritten: " + handOversTakenIn + ")"
          + " membership_deletes=" + membershipDeletes + " closes_that_deleted=" + cleanCloses
          + " deletes_of_newer=" + newerDeleted
          + " released_memberships_left=" + membershipLeasesLeft
          + " lists_after_failure=" + listsAfterFailure + " (late: " + lateLists + ", longest wait "
          + maxListWaitNanos / 1_000_000 + " ms) view_restarts=" + viewRestarts
          + " unanswered_lists=" + unansweredLists
          + " partial_list_plans=" + partialListPlans
          + " loss_stops=" + lossStops + " (left: " + lossLeaves + ", longest leave " + maxLossLeaveNanos / 1_000_000
          + " ms (" + Math.round(100 * maxLossLeaveShare) + "% of bound), violations " + lossStopViolations + ")"
          + gaps() + " broken_variants_caught=" + caught + "/" + variants + " (unobserved here: "
          + UNOBSERVABLE.size() + ")" + " sharding_line_coverage="
          + SimulationCoverage.percent(SimulationCoverage.lines(SimulationCoverage.SHARDING));
    }
  }
}
