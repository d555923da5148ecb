package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ElectionState.StopCause;
import io.github.electionpolicy.fabric8.RunnerLifecycleCommand.*;
import io.github.electionpolicy.fabric8.RunnerLifecyclePhase.*;
import java.util.Optional;

/**
 * What {@code close()} leads to in each phase of {@link RunnerLifecycle}: the term ends, the elector stops
 * acquiring, the services stop under their deadline, and the elector is finished (releasing the Lease only after a
 * clean stop); a close during a loss answers the loss, and a close while exiting stops at once, since the exiter
 * may never return. The owner's close (a sharded replica's coordinator's, not the user's) is the same close, but
 * during a loss it yields to the loss policy: the policy's answer decides, and the runner closes only if it was to
 * contend again.
 *
 * <p>Pure: static functions of the {@link RunnerLifecycleState}, which they change and append commands to; no
 * thread, lock, clock or logger. Not thread-safe: {@link RunnerLifecycle} calls them on the runner's loop.
 */
final class RunnerLifecycleClosing {

  private RunnerLifecycleClosing() {}

  static void close(RunnerLifecycleState s) {
    if (s.closeRequested) {
      return; // close twice
    }
    s.closeRequested = true;
    if (s.phase instanceof Created) {
      RunnerLifecycleEnding.stopped(s, StopCause.CLOSED, Optional.empty());
    } else if (s.phase instanceof Unelected) {
      s.emit(new EndTerm(s.term));
      closeServicesThen(s);
    } else if (s.phase instanceof Preflight) {
      s.emit(new AbandonElector()); // it has written nothing: there is nothing to release
      s.electorDone = true;
      RunnerLifecycleEnding.stopped(s, StopCause.CLOSED, Optional.empty());
    } else if (s.phase instanceof Contending) {
      s.emit(new CloseElector());
      closeServicesThen(s);
    } else if (s.phase instanceof Leading) {
      s.emit(new EndTerm(s.term));
      s.emit(new CloseElector());
      if (s.config.flaw() == RunnerFlaw.RELEASE_BEFORE_STOP) {
        s.emit(new FinishElector(true));
      }
      closeServicesThen(s);
    } else if (s.phase instanceof Stopping stopping) {
      if (stopping.reason() == StopReason.LOSS) {
        // The elector waits for the loss to be handled: closing is the answer, given by the FinishElector that follows
        // the stops (RunnerLifecycleLoss.closeAfterLoss says why no ElectorAfterLoss goes first).
        s.phase = new Stopping(StopReason.CLOSE, Optional.empty());
      }
      // A failed election keeps its cause; closeRequested keeps it from exiting.
    } else if (s.phase instanceof HandlingLoss) {
      // The handler's answer no longer matters; the services are stopped, cleanly or not (a stop that threw may have
      // left its work running: the Lease is left to expire then, as after any unclean stop).
      RunnerLifecycleLoss.closeAfterLoss(s, !s.lossUnclean);
    } else if (s.phase instanceof Exiting exiting) {
      // The exiter may never return (System.exit runs the shutdown hook that called close()).
      RunnerLifecycleEnding.stopped(s, exiting.cause(), exiting.failure());
    }
    // Finishing, Stopped: already on the way out.
  }

  /**
   * The owner's close: while a loss is handled (its services stop, or the handler runs) the loss policy answers it
   * first ({@link RunnerLifecycleLoss#contendAgainOrClose}), so that a {@code STOP} (or an {@code EXIT} whose exiter
   * returned) ends the runner as {@link StopCause#LOST}, not as closed; elsewhere it is {@link #close}. After the
   * user's close, or twice, it changes nothing.
   */
  static void ownerClose(RunnerLifecycleState s) {
    if (s.phase instanceof Stopping stopping && stopping.reason() == StopReason.LOSS
        || s.phase instanceof HandlingLoss) {
      s.closeAfterLoss = true;
    } else {
      close(s);
    }
  }

  /** On close: stop the services if any run, then finish; or finish at once. */
  private static void closeServicesThen(RunnerLifecycleState s) {
    s.relinquishAfterStop = false;
    if (s.services.active()) {
      s.stopServices();
      s.phase = new Stopping(StopReason.CLOSE, Optional.empty());
    } else if (s.services == RunnerLifecycleServices.STOPPING) {
      // A stop is in flight (after a failed start): the Lease waits for its outcome, under its deadline.
      s.phase = new Stopping(StopReason.CLOSE, Optional.empty());
    } else {
      boolean clean = !s.unreportedUnclean && s.services != RunnerLifecycleServices.HUNG;
      s.unreportedUnclean = false;
      RunnerLifecycleEnding.finish(s, StopCause.CLOSED, Optional.empty(), clean);
    }
  }
}
