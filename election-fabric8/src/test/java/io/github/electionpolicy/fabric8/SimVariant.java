package io.github.electionpolicy.fabric8;

/**
 * What the simulation runs: the real protocol and runner, or one deliberate defect that the invariants must
 * catch (which shows they can fail at all). Six defects live in {@link LeaseProtocol.Flaw}, fifteen in
 * {@link RunnerFlaw}: the lifecycle, the driver, the elector and its watch, the service sequencing, the term and
 * the write gate. All of them are in the production classes the simulation drives, never in the simulation's own code.
 */
enum SimVariant {
  /** The real protocol and runner. */
  REAL(LeaseProtocol.Flaw.NONE, RunnerFlaw.NONE),
  IGNORE_RENEW_DEADLINE(LeaseProtocol.Flaw.IGNORE_RENEW_DEADLINE, RunnerFlaw.NONE),
  EARLY_TAKEOVER(LeaseProtocol.Flaw.EARLY_TAKEOVER, RunnerFlaw.NONE),
  REMOTE_RENEW_TIME(LeaseProtocol.Flaw.REMOTE_RENEW_TIME, RunnerFlaw.NONE),
  NO_TRANSITION_INCREMENT(LeaseProtocol.Flaw.NO_TRANSITION_INCREMENT, RunnerFlaw.NONE),
  NO_RELEASE_AFTER_DEADLINE(LeaseProtocol.Flaw.NO_RELEASE_AFTER_DEADLINE, RunnerFlaw.NONE),
  NO_WAIT_AFTER_FAILURE(LeaseProtocol.Flaw.NO_WAIT_AFTER_FAILURE, RunnerFlaw.NONE),
  RELEASE_BEFORE_STOP(LeaseProtocol.Flaw.NONE, RunnerFlaw.RELEASE_BEFORE_STOP),
  RELEASE_AFTER_HUNG_STOP(LeaseProtocol.Flaw.NONE, RunnerFlaw.RELEASE_AFTER_HUNG_STOP),
  START_WHILE_CLOSING(LeaseProtocol.Flaw.NONE, RunnerFlaw.START_WHILE_CLOSING),
  WATCH_EVENT_DATED_AT_OPEN(LeaseProtocol.Flaw.NONE, RunnerFlaw.WATCH_EVENT_DATED_AT_OPEN),
  FAILED_START_TERM_LEFT_VALID(LeaseProtocol.Flaw.NONE, RunnerFlaw.FAILED_START_TERM_LEFT_VALID),
  TERM_VALID_UNTIL_ENDED(LeaseProtocol.Flaw.NONE, RunnerFlaw.TERM_VALID_UNTIL_ENDED),
  GATE_CHECKS_ENDED_ONLY(LeaseProtocol.Flaw.NONE, RunnerFlaw.GATE_CHECKS_ENDED_ONLY),
  LOSS_HANDLER_BEFORE_STOP(LeaseProtocol.Flaw.NONE, RunnerFlaw.LOSS_HANDLER_BEFORE_STOP),
  HANDLER_FAILURE_RECONTENDS(LeaseProtocol.Flaw.NONE, RunnerFlaw.HANDLER_FAILURE_RECONTENDS),
  PREFLIGHT_DENIAL_IGNORED(LeaseProtocol.Flaw.NONE, RunnerFlaw.PREFLIGHT_DENIAL_IGNORED),
  FAILURE_LEAVES_SERVICES(LeaseProtocol.Flaw.NONE, RunnerFlaw.FAILURE_LEAVES_SERVICES),
  UNELECTED_FAILED_START_LEAVES_SERVICES(LeaseProtocol.Flaw.NONE, RunnerFlaw.UNELECTED_FAILED_START_LEAVES_SERVICES),
  HUNG_STOP_LOOKS_LIVE(LeaseProtocol.Flaw.NONE, RunnerFlaw.HUNG_STOP_LOOKS_LIVE),
  LISTENER_FAILURE_ENDS_DISPATCH(LeaseProtocol.Flaw.NONE, RunnerFlaw.LISTENER_FAILURE_ENDS_DISPATCH),
  EXITER_FAILURE_UNREPORTED(LeaseProtocol.Flaw.NONE, RunnerFlaw.EXITER_FAILURE_UNREPORTED);

  final LeaseProtocol.Flaw flaw;
  final RunnerFlaw runnerFlaw;

  /** Whether this is one of the deliberately broken variants the invariants must catch. */
  boolean deliberatelyBroken() {
    return this != REAL;
  }

  /** Whether the defect is in the runner rather than in the protocol. */
  boolean inRunner() {
    return runnerFlaw != RunnerFlaw.NONE;
  }

  SimVariant(LeaseProtocol.Flaw flaw, RunnerFlaw runnerFlaw) {
    this.flaw = flaw;
    this.runnerFlaw = runnerFlaw;
  }
}
