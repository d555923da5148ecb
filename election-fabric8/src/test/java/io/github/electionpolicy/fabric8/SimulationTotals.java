package io.github.electionpolicy.fabric8;

/**
 * What all simulated runs of the real runner add up to, for the one summary line.
 *
 * <p>Thread-safe (synchronized): jqwik runs the properties of a container one after the other, but nothing
 * here should depend on that.
 */
final class SimulationTotals {

  private long schedules;
  private long replicaSteps;
  private long failovers;
  private long overlaps;
  private long validAtOthersElection;
  private long staleWrites;
  private long tokenRegressions;
  private long lostReleases;
  private long livenessViolations;
  private long loadViolations;
  private long lifecycleViolations;
  private int maxRequestsPerRetryPeriod;
  private long exits;
  private long writesAccepted;
  private long writesRefused;
  private long gateClosed;
  private long deniedWithReadInFlight;
  private long closesLeftToAForeignWrite;
  private long releasesAfterLossChecked;
  private int variantsCaught;
  private int variants;

  synchronized void add(Simulator.Result result) {
    SimInvariants i = result.invariants();
    schedules++;
    replicaSteps += result.replicaSteps();
    failovers += i.failovers;
    overlaps += i.overlaps;
    validAtOthersElection += i.validAtOthersElection;
    staleWrites += i.staleWrites;
    tokenRegressions += i.tokenRegressions;
    lostReleases += i.lostReleases;
    livenessViolations += i.livenessViolations;
    loadViolations += i.loadViolations;
    lifecycleViolations += i.lifecycleViolations;
    maxRequestsPerRetryPeriod = Math.max(maxRequestsPerRetryPeriod, i.maxRequestsPerRetryPeriod);
    exits += i.exits;
    writesAccepted += i.writesAccepted;
    writesRefused += i.writesRefused;
    gateClosed += i.gateClosed;
    deniedWithReadInFlight += i.deniedWithReadInFlight;
    closesLeftToAForeignWrite += i.closesLeftToAForeignWrite;
    releasesAfterLossChecked += i.releasesAfterLossChecked;
  }

  private int runnerVariantsCaught;
  private int runnerVariants;

  synchronized void brokenVariants(int caught, int of, int runnerCaught, int runnerOf) {
    variantsCaught = caught;
    variants = of;
    runnerVariantsCaught = runnerCaught;
    runnerVariants = runnerOf;
  }

  synchronized long replicaSteps() {
    return replicaSteps;
  }

  synchronized String line() {
    return "SIMULATION schedules=" + schedules + " replica_events=" + replicaSteps + " failovers=" + failovers
        + " overlaps=" + overlaps + " token_regressions=" + tokenRegressions + " lost_releases=" + lostReleases
        + " liveness_violations=" + livenessViolations + " lifecycle_violations=" + lifecycleViolations
        + " max_requests_per_retry_period=" + maxRequestsPerRetryPeriod + " broken_variants_caught="
        + variantsCaught + "/" + variants + " (runner " + runnerVariantsCaught + "/" + runnerVariants + ")"
        + " runner_line_coverage=" + SimulationCoverage.percent(SimulationCoverage.lines(SimulationCoverage.RUNNER))
        + " protocol_line_coverage="
        + SimulationCoverage.percent(SimulationCoverage.lines(SimulationCoverage.PROTOCOL));
  }

  synchronized String details() {
    return "simulation details: valid_at_others_election=" + validAtOthersElection + " stale_writes=" + staleWrites
        + " load_violations=" + loadViolations + " (bound " + SimInvariants.LOAD_BOUND + " + "
        + SimInvariants.CALLS_PER_CHANGE + " per change by others) exits=" + exits
        + " gated_writes_accepted=" + writesAccepted + " refused_by_server=" + writesRefused
        + " blocked_by_gate=" + gateClosed + " denied_with_read_in_flight=" + deniedWithReadInFlight
        + " closes_left_to_a_foreign_write=" + closesLeftToAForeignWrite
        + " releases_after_a_loss_checked=" + releasesAfterLossChecked
        + "; lines covered: "
        + SimulationCoverage.perClass(SimulationCoverage.RUNNER);
  }
}
