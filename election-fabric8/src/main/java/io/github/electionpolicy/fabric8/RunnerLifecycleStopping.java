package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ElectionState.StopCause;
import io.github.electionpolicy.fabric8.RunnerLifecycleCommand.*;
import io.github.electionpolicy.fabric8.RunnerLifecyclePhase.*;
import io.github.electionpolicy.fabric8.RunnerLifecycleInput.*;
import java.util.Optional;

/**
 * What the outcome of a stop of the services leads to in {@link RunnerLifecycle}: a stop that returned, or one
 * that outlived {@code stopTimeout} (it is then hung, and the Lease is left to expire), decided by why the services
 * were stopped: a failed start while leading (the term is relinquished), a close, a loss, a failed unelected start
 * or a failure of the election logic.
 *
 * <p>Pure: static functions of the {@link RunnerLifecycleState}, which they change and append commands to; no
 * thread, lock, clock or logger. Not thread-safe: {@link RunnerLifecycle} calls them on the runner's loop.
 */
final class RunnerLifecycleStopping {

  private RunnerLifecycleStopping() {}

  static void stopDeadline(RunnerLifecycleState s, StopDeadline deadline) {
    if (deadline.stop() != s.stopNumber || s.services != RunnerLifecycleServices.STOPPING) {
      return; // an older stop's deadline, or the stop already returned
    }
    s.services = RunnerLifecycleServices.HUNG;
    servicesStopped(s, false, false, true);
  }

  /** A stop returned ({@code timedOut} false) or outlived its deadline ({@code timedOut} true). */
  static void servicesStopped(RunnerLifecycleState s, boolean stopClean, boolean stopFatal, boolean timedOut) {
    s.fatal |= stopFatal;
    if (!timedOut) {
      if (s.services == RunnerLifecycleServices.HUNG) {
        s.services = RunnerLifecycleServices.IDLE; // the hung stop returned at last; nothing waits for it any more
        return;
      }
      if (s.services != RunnerLifecycleServices.STOPPING) {
        return;
      }
      s.services = RunnerLifecycleServices.IDLE;
    }
    boolean clean = stopClean && !s.unreportedUnclean && !timedOut;
    s.unreportedUnclean = false;
    if (s.phase instanceof Leading leading && s.relinquishAfterStop) {
      s.relinquishAfterStop = false;
      boolean release = clean && !s.fatal;
      if (!release) {
        s.emit(s.lines.failedStartNotReleased(s.fatal, timedOut));
      }
      // What the loss reaction then hears: a stop that threw or hung after the failed start is unclean.
      s.unreportedUnclean = !clean;
      s.emit(new Relinquish(leading.term(), release));
      return;
    }
    if (!(s.phase instanceof Stopping stopping)) {
      return;
    }
    switch (stopping.reason()) {
      case CLOSE -> {
        if (!clean) {
          s.emit(s.lines.closeUnclean(timedOut));
        }
        RunnerLifecycleEnding.finish(s, StopCause.CLOSED, Optional.empty(), clean
            || timedOut && s.config.flaw() == RunnerFlaw.RELEASE_AFTER_HUNG_STOP);
      }
      case LOSS -> RunnerLifecycleLoss.afterLossStops(s, clean, timedOut);
      case START_FAILED -> {
        if (!clean) {
          s.emit(s.lines.startFailedUnclean(timedOut));
        }
        s.emit(new StartCompleted(stopping.failure()));
        RunnerLifecycleEnding.stopped(s, StopCause.START_FAILED, stopping.failure());
      }
      case ELECTION_FAILED -> {
        if (!clean) {
          s.emit(s.lines.electionFailedUnclean(timedOut));
        }
        RunnerLifecycleEnding.stopOrExit(s, StopCause.ELECTION_FAILED, stopping.failure(), "Election failed for Lease");
      }
    }
  }
}
