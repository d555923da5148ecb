package io.github.electionpolicy.fabric8;

/**
 * What the simulation runs: the real protocol and runner rules, or one deliberate defect that the invariants
 * must catch (which shows they can fail at all). Four defects live in {@link LeaseProtocol.Flaw}; two are in the
 * harness's runner.
 */
enum SimVariant {
  /** The real protocol and the runner's rules. */
  REAL(LeaseProtocol.Flaw.NONE),
  IGNORE_RENEW_DEADLINE(LeaseProtocol.Flaw.IGNORE_RENEW_DEADLINE),
  EARLY_TAKEOVER(LeaseProtocol.Flaw.EARLY_TAKEOVER),
  REMOTE_RENEW_TIME(LeaseProtocol.Flaw.REMOTE_RENEW_TIME),
  NO_TRANSITION_INCREMENT(LeaseProtocol.Flaw.NO_TRANSITION_INCREMENT),
  /** close() releases the Lease first and stops the reconcilers after. */
  RELEASE_BEFORE_STOP(LeaseProtocol.Flaw.NONE),
  /**
   * After a failed start under RECONTEND the runner contends with a fresh protocol, which forgets the failed
   * terms and so never backs off: the backoff itself lives in the protocol, and this is how to switch it off
   * from outside.
   */
  NO_BACKOFF_AFTER_FAILED_START(LeaseProtocol.Flaw.NONE),
  /**
   * The runner as it was before the simulation found its defect: after a failed start it relinquished without
   * ending the term, so the term still read valid while the release was in flight, and after the server applied
   * it another replica could be elected before the answer came back (invariant 2). {@link ServiceSequence} now
   * ends the term first; {@code SimulationFindingsTest} replays the schedule that showed the gap.
   */
  FAILED_START_TERM_LEFT_VALID(LeaseProtocol.Flaw.NONE);

  final LeaseProtocol.Flaw flaw;

  /** Whether this is one of the deliberately broken variants the invariants must catch. */
  boolean deliberatelyBroken() {
    return this != REAL && this != FAILED_START_TERM_LEFT_VALID;
  }

  SimVariant(LeaseProtocol.Flaw flaw) {
    this.flaw = flaw;
  }
}
