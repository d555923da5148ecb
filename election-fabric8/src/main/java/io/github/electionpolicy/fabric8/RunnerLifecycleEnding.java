package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ElectionState.StopCause;
import io.github.electionpolicy.fabric8.RunnerLifecycleCommand.*;
import io.github.electionpolicy.fabric8.RunnerLifecyclePhase.*;
import java.util.Objects;
import java.util.Optional;

/**
 * How {@link RunnerLifecycle} ends, and what a failure of the election logic leads to: the runner stops for good
 * either through the exiter (under {@code EXIT}, never once closing or unelected), or by finishing the elector
 * first (releasing the Lease only when every stop was clean and nothing was fatal), or at once when no elector is
 * left; and a failure ends the term, stops the services under their deadline, and only then stops the runner.
 *
 * <p>Pure: static functions of the {@link RunnerLifecycleState}, which they change and append commands to; no
 * thread, lock, clock or logger. Not thread-safe: {@link RunnerLifecycle} calls them on the runner's loop.
 */
final class RunnerLifecycleEnding {

  private RunnerLifecycleEnding() {}

  static void electionFailed(RunnerLifecycleState s, Throwable cause) {
    Objects.requireNonNull(cause, "cause");
    s.electorDone = true;
    if (s.phase instanceof Stopped || s.phase instanceof Exiting) {
      return;
    }
    if (s.phase instanceof Finishing finishing) {
      stopped(s, finishing.cause(), finishing.failure()); // loop death during close: nothing is left to finish
      return;
    }
    if (s.closeRequested) {
      if (!(s.phase instanceof Stopping)) {
        stopped(s, StopCause.CLOSED, Optional.empty());
      }
      return; // the close's stop is in flight; it finishes with the elector already gone
    }
    s.emit(s.lines.electionFailed(cause));
    if (s.phase instanceof Preflight) {
      s.emit(new AbandonElector()); // it reads beside the preflight; it has written nothing
    }
    if (s.term != null) {
      // Elected or not: the services stop next, and their term must not outlive the runner.
      s.emit(new EndTerm(s.term));
      s.term = null;
    }
    if (s.published.kind() == ElectionState.Kind.LEADING) {
      s.emit(new Publish(new ElectionState.Following(Optional.empty())));
    }
    Optional<Throwable> failure = Optional.of(cause);
    if (s.config.flaw() == RunnerFlaw.FAILURE_LEAVES_SERVICES) {
      stopOrExit(s, StopCause.ELECTION_FAILED, failure, "Election failed for Lease");
    } else if (s.services.active()) {
      s.stopServices();
      s.phase = new Stopping(StopReason.ELECTION_FAILED, failure);
    } else if (s.services == RunnerLifecycleServices.STOPPING) {
      s.phase = new Stopping(StopReason.ELECTION_FAILED, failure);
    } else {
      stopOrExit(s, StopCause.ELECTION_FAILED, failure, "Election failed for Lease");
    }
  }

  /** Stops for good: through the exiter under {@code EXIT}, else at once (after the elector finished). */
  static void stopOrExit(RunnerLifecycleState s, StopCause cause, Optional<Throwable> failure, String why) {
    // Never once closing: closing is not a loss, and an exit from a shutdown hook's close() would deadlock.
    // Nor running unelected: there is no loss, and the settings' loss policy is not used then.
    if (s.config.policy() == LossPolicy.Kind.EXIT && !s.closeRequested && s.config.contends()) {
      exit(s, cause, failure, why);
    } else {
      finish(s, cause, failure, false);
    }
  }

  static void exit(RunnerLifecycleState s, StopCause cause, Optional<Throwable> failure, String why) {
    s.phase = new Exiting(cause, failure);
    s.emit(new Exit(why));
  }

  /** Ends the elector (releasing when {@code release}), then stops with {@code cause}. */
  static void finish(RunnerLifecycleState s, StopCause cause, Optional<Throwable> failure, boolean release) {
    s.phase = new Finishing(cause, failure);
    if (s.electorDone || !s.config.contends()) {
      stopped(s, cause, failure);
      return;
    }
    s.emit(new FinishElector(release && !s.fatal));
  }

  static void stopped(RunnerLifecycleState s, StopCause cause, Optional<Throwable> failure) {
    s.phase = new Stopped(cause);
    s.term = null;
    s.emit(new ReportStopped(cause, failure));
  }
}
