package io.github.electionpolicy.fabric8;

import java.util.Optional;

/**
 * What happened to a runner, as a value that {@link RunnerLifecycle#step} takes in: a call of its public API,
 * an answer of the elector, the end of a callback on the callback pool, or a deadline of the loop.
 */
sealed interface RunnerLifecycleInput {
  /** {@code start()} was called; running unelected, under {@code unelectedTerm}. */
  record Start(Optional<LeadershipTerm> unelectedTerm) implements RunnerLifecycleInput {}

  /** The RBAC preflight answered: empty when the runner may contend. */
  record PreflightDone(Optional<LeaseAccessDeniedException> denied) implements RunnerLifecycleInput {}

  /** The elector follows {@code holder} (empty: none known, or the Lease is free). */
  record Followed(Optional<String> holder) implements RunnerLifecycleInput {}

  /** The elector won {@code term}. */
  record Elected(LeadershipTerm term) implements RunnerLifecycleInput {}

  /** The elector lost {@code term} and waits for {@link RunnerLifecycleCommand.ElectorAfterLoss}. */
  record Lost(LeadershipTerm term) implements RunnerLifecycleInput {}

  /** The elector's loop ended: it sends nothing more. */
  record ElectorFinished() implements RunnerLifecycleInput {}

  /** {@code close()} was called. */
  record CloseRequested() implements RunnerLifecycleInput {}

  /**
   * The runner's owner closes it, not its user: a sharded replica's coordinator, on its membership's loss or by its
   * plan. A loss being handled is not answered by it: the loss policy answers, and the runner closes only if that
   * answer was to contend again. Elsewhere it is a {@link CloseRequested}.
   */
  record OwnerCloseRequested() implements RunnerLifecycleInput {}

  /**
   * A start of the services returned: {@code kind} as {@link ServiceSequence} reports it, whether a
   * {@link VirtualMachineError} was thrown, and what the failing start threw. The services it started still run
   * after a failure or an ended term: the lifecycle stops them, with its deadline.
   */
  record ServicesStarted(ServiceSequence.StartKind kind, boolean fatal, Optional<Throwable> failure)
      implements RunnerLifecycleInput {}

  /** A stop of the services returned; {@code clean} when no {@code stop()} threw. */
  record ServicesStopped(boolean clean, boolean fatal) implements RunnerLifecycleInput {}

  /** The stop numbered {@code stop} outlived its deadline. */
  record StopDeadline(int stop) implements RunnerLifecycleInput {}

  /** The loss handler returned (or threw: {@code contendAgain} false). */
  record LossHandled(boolean contendAgain) implements RunnerLifecycleInput {}

  /** The exiter returned (or threw). */
  record Exited() implements RunnerLifecycleInput {}

  /** The election logic failed: the elector is gone. */
  record ElectionFailed(Throwable cause) implements RunnerLifecycleInput {}
}
