package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ElectionState.StopCause;
import java.util.Optional;

/**
 * What {@link RunnerLifecycle#step} tells its driver to do, as values, in order: {@link LifecycleDriver} carries
 * them out (on the loop, handing user code and I/O to other threads).
 */
sealed interface RunnerLifecycleCommand {
  /** Publish a state to readers and listeners (a state equal to the current one is not published again). */
  record Publish(ElectionState state) implements RunnerLifecycleCommand {}

  /** Start the services under {@code term}. */
  record StartServices(LeadershipTerm term) implements RunnerLifecycleCommand {}

  /**
   * Stop the services; report {@link RunnerLifecycleInput.StopDeadline} with {@code stop} after
   * {@code stopTimeout}.
   */
  record StopServices(int stop) implements RunnerLifecycleCommand {}

  /** End {@code term}: from now on it reports not valid. */
  record EndTerm(LeadershipTerm term) implements RunnerLifecycleCommand {}

  /** Run the RBAC preflight. */
  record RunPreflight() implements RunnerLifecycleCommand {}

  /** Start the elector. */
  record StartElector() implements RunnerLifecycleCommand {}

  /**
   * Start the elector with its writes held while the RBAC preflight runs: it reads and watches (a read changes
   * nothing), and a create or update it decides on waits for {@link AllowWrites}.
   */
  record StartElectorWritesHeld() implements RunnerLifecycleCommand {}

  /** The preflight let the runner contend: the elector's held write (if any) goes out, and later ones at once. */
  record AllowWrites() implements RunnerLifecycleCommand {}

  /** End the elector, which has written nothing, sending nothing more: the answer of a read in flight is dropped. */
  record AbandonElector() implements RunnerLifecycleCommand {}

  /** Stop acquiring: a leader keeps renewing until {@link FinishElector}. */
  record CloseElector() implements RunnerLifecycleCommand {}

  /** End the elector's loop; a leader releases the Lease when {@code release}, else leaves it to expire. */
  record FinishElector(boolean release) implements RunnerLifecycleCommand {}

  /** Give {@code term} up as lost (a service failed to start); release first when {@code release}. */
  record Relinquish(LeadershipTerm term, boolean release) implements RunnerLifecycleCommand {}

  /** The loss was handled: contend again, or end the loop. */
  record ElectorAfterLoss(boolean contendAgain) implements RunnerLifecycleCommand {}

  /** Call the loss handler for {@code term}. */
  record CallLossHandler(LeadershipTerm term) implements RunnerLifecycleCommand {}

  /** Call the exiter with {@link LossPolicy#LOSS_EXIT_STATUS}. */
  record Exit(String why) implements RunnerLifecycleCommand {}

  /** The unelected start is over; {@code failure} is what a service's start threw, if one did. */
  record StartCompleted(Optional<Throwable> failure) implements RunnerLifecycleCommand {}

  /** A log line. */
  record Log(Level level, String message) implements RunnerLifecycleCommand {}

  /** The last command: publish {@code STOPPED} with this cause and end the runner's I/O and timers. */
  record ReportStopped(StopCause cause, Optional<Throwable> failure) implements RunnerLifecycleCommand {}

  /** The level of a {@link Log} line. */
  enum Level {
    INFO, WARN, ERROR
  }
}
