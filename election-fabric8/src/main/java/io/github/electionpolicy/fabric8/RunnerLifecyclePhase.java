package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ElectionState.StopCause;
import java.util.Optional;

/**
 * Where a runner stands, as {@link RunnerLifecycle} decides it: exactly one of these values at a time. The
 * lifecycle's step table ({@code runner-lifecycle-steps.txt}) has a row for every phase and every
 * {@link RunnerLifecycleInput}.
 */
sealed interface RunnerLifecyclePhase {
  /** Built, not started. */
  record Created() implements RunnerLifecyclePhase {}

  /** Running unelected, under {@code term} (never elected, valid until closed). */
  record Unelected(LeadershipTerm term) implements RunnerLifecyclePhase {}

  /**
   * The RBAC preflight runs; the elector reads and watches beside it, but writes nothing until the verdict lets
   * it contend.
   */
  record Preflight() implements RunnerLifecyclePhase {}

  /** Contending without the Lease: the elector reads, watches and tries to take it. */
  record Contending() implements RunnerLifecyclePhase {}

  /** Holding the Lease under {@code term}; the services start or run. */
  record Leading(LeadershipTerm term) implements RunnerLifecyclePhase {}

  /** The services are being stopped, for {@code reason}; {@code failure} is set for a failed election. */
  record Stopping(StopReason reason, Optional<Throwable> failure) implements RunnerLifecyclePhase {}

  /** The loss handler runs, after the services stopped. */
  record HandlingLoss() implements RunnerLifecyclePhase {}

  /** The exiter runs; then the runner stops with {@code cause}. */
  record Exiting(StopCause cause, Optional<Throwable> failure) implements RunnerLifecyclePhase {}

  /** The elector finishes (releases, abandons, or just ends); then the runner stops with {@code cause}. */
  record Finishing(StopCause cause, Optional<Throwable> failure) implements RunnerLifecyclePhase {}

  /** Stopped for good. */
  record Stopped(StopCause cause) implements RunnerLifecyclePhase {}

  /** Why the services are being stopped. */
  enum StopReason {
    CLOSE, LOSS, ELECTION_FAILED, START_FAILED
  }
}
