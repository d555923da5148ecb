package io.github.electionpolicy.fabric8;

/**
 * Deliberate one-line defects of the runner, each the slip a maintainer could make, for the simulation's broken
 * variants: the simulation must catch every one of them, which shows its invariants can fail on this code.
 * Production runners always run {@link #NONE}; the builder's setter is package-private. (The protocol's own
 * defects are {@link LeaseProtocol.Flaw}.)
 */
enum RunnerFlaw {
  /** The real runner. */
  NONE,
  /** Lifecycle: a close releases the Lease first and stops the services after (two steps in the wrong order). */
  RELEASE_BEFORE_STOP,
  /** Lifecycle: a close whose stop outlived stopTimeout releases the Lease instead of leaving it to expire. */
  RELEASE_AFTER_HUNG_STOP,
  /** Lifecycle: a term won while closing starts the services (the closing check dropped). */
  START_WHILE_CLOSING,
  /** Elector: a watch event is dated when the watch opened, not when it arrived (a time read at the wrong moment). */
  WATCH_EVENT_DATED_AT_OPEN,
  /** Service sequencing: a failed start gives its term up without ending it first. */
  FAILED_START_TERM_LEFT_VALID,
  /** Term: validity reads the ended flag only, not the clock (a flag checked instead of the clock). */
  TERM_VALID_UNTIL_ENDED,
  /** Write gate: the gate lets a write through unless the term was ended, whatever its deadline says. */
  GATE_CHECKS_ENDED_ONLY,
  /** Lifecycle: under CUSTOM, the loss handler is called before the services are stopped (two steps swapped). */
  LOSS_HANDLER_BEFORE_STOP,
  /** Driver: a loss handler that throws is taken as asking to contend again (the wrong default in a catch). */
  HANDLER_FAILURE_RECONTENDS,
  /** Lifecycle: the RBAC preflight's denial is not checked, and the runner contends anyway (a check dropped). */
  PREFLIGHT_DENIAL_IGNORED,
  /** Lifecycle: a failed election stops the runner without stopping the services (a step dropped). */
  FAILURE_LEAVES_SERVICES,
  /** Lifecycle: an unelected start that fails reports at once, leaving the services it started running. */
  UNELECTED_FAILED_START_LEAVES_SERVICES,
  /** Driver: the snapshot readers see does not say that a stop outlived its timeout (a flag not copied). */
  HUNG_STOP_LOOKS_LIVE,
  /** Driver: a listener that throws keeps the listeners after it from hearing the event (try outside the loop). */
  LISTENER_FAILURE_ENDS_DISPATCH,
  /** Callbacks: an exiter that throws is logged but not reported, so the runner stays exiting for ever (a return). */
  EXITER_FAILURE_UNREPORTED,
  /**
   * Public surface: {@code close()} checks the closed flag, hands the close to the loop, and only then sets the
   * flag (a check-then-act split in two). The loop may stop the runner before the flag is set: a reader then sees
   * {@code STOPPED} with cause {@code CLOSED} while {@code isClosed()} is false, and a listener hearing
   * {@code STOPPED} takes a close for a stop on its own. Caught by the controlled-concurrency exploration
   * ({@code RunnerBoundaryExplorationTest}), not by the simulation: it is a race between threads, and the
   * simulation has one.
   */
  CLOSED_FLAG_SET_AFTER_HANDOFF
}
