package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ElectionState.StopCause;
import io.github.electionpolicy.fabric8.RunnerLifecycleCommand.*;
import io.github.electionpolicy.fabric8.RunnerLifecyclePhase.*;
import io.github.electionpolicy.fabric8.RunnerLifecycleInput.*;
import java.util.Optional;

/**
 * What a loss of leadership leads to in {@link RunnerLifecycle}: the term ends and the services stop first; then the
 * loss policy applies ({@code EXIT} exits, {@code RECONTEND} contends again, {@code CUSTOM} asks the loss
 * handler), and the runner contends again only once every service stopped cleanly; a stop that threw or outlived
 * {@code stopTimeout} ends contention for good ({@link StopCause#LOST}).
 *
 * <p>Pure: static functions of the {@link RunnerLifecycleState}, which they change and append commands to; no
 * thread, lock, clock or logger. Not thread-safe: {@link RunnerLifecycle} calls them on the runner's loop.
 */
final class RunnerLifecycleLoss {

  private RunnerLifecycleLoss() {}

  static void lost(RunnerLifecycleState s, Lost lost) {
    if (s.phase instanceof Leading) {
      s.lastLostTerm = lost.term();
      s.emit(new EndTerm(lost.term()));
      if (s.published.kind() == ElectionState.Kind.LEADING) {
        // The holder is unknown unless the protocol just said who took the Lease.
        s.emit(new Publish(new ElectionState.Following(Optional.empty())));
      }
      s.term = null;
      s.relinquishAfterStop = false;
      if (s.config.flaw() == RunnerFlaw.LOSS_HANDLER_BEFORE_STOP && s.config.policy() == LossPolicy.Kind.CUSTOM
          && s.services.active()) {
        s.lossUnclean = false;
        s.phase = new HandlingLoss();
        s.emit(new CallLossHandler(s.lastLostTerm));
        s.stopServices();
        return;
      }
      s.phase = new Stopping(StopReason.LOSS, Optional.empty());
      if (s.services.active()) {
        s.stopServices();
      } else if (s.services != RunnerLifecycleServices.STOPPING) {
        // A failed start's services have stopped (or outlived their deadline): react to the loss at once. (While
        // the stop after a failed start is in flight, its outcome decides.)
        boolean hung = s.services == RunnerLifecycleServices.HUNG;
        afterLossStops(s, !s.unreportedUnclean && !hung, hung);
        s.unreportedUnclean = false;
      }
      return;
    }
    if (s.phase instanceof Stopping stopping && stopping.reason() == StopReason.CLOSE) {
      // Closing, its services still stopping: the FinishElector that follows their stops answers the loss, and
      // releases the Lease if they stopped cleanly and the loss left the Lease as this replica last wrote it.
      return;
    }
    // A loss while closing (or after the runner gave up): it ends the loop; closing is not a loss.
    s.emit(new ElectorAfterLoss(false));
  }

  /** The services stopped (or gave up on) after a loss: apply the loss policy. */
  static void afterLossStops(RunnerLifecycleState s, boolean clean, boolean timedOut) {
    switch (s.config.policy()) {
      case EXIT -> {
        if (!clean) {
          s.emit(s.lines.exitingUnclean(timedOut));
        }
        s.emit(new ElectorAfterLoss(false));
        s.electorDone = true;
        RunnerLifecycleEnding.exit(s, StopCause.LOST, Optional.empty(), "Lost leadership of Lease");
      }
      case RECONTEND, CUSTOM -> {
        if (s.config.policy() == LossPolicy.Kind.CUSTOM && !timedOut && !s.fatal) {
          // The handler hears every loss whose stops returned; after one that threw it may not contend again.
          s.lossUnclean = !clean;
          s.phase = new HandlingLoss();
          s.emit(new CallLossHandler(s.lastLostTerm));
        } else if (!clean) {
          s.emit(s.lines.lossUnclean(timedOut));
          s.emit(new ElectorAfterLoss(false));
          RunnerLifecycleEnding.finish(s, StopCause.LOST, Optional.empty(), false);
        } else if (s.fatal) {
          s.emit(s.lines.lossFatal());
          s.emit(new ElectorAfterLoss(false));
          RunnerLifecycleEnding.finish(s, StopCause.LOST, Optional.empty(), false);
        } else {
          contendAgainOrClose(s);
        }
      }
    }
  }

  /**
   * The loss policy said to contend again: it does, unless its owner closed it meanwhile (an owner's close yields to
   * the policy's answer, {@link RunnerLifecycleClosing#ownerClose}): then it closes, as a close while the handler ran.
   */
  static void contendAgainOrClose(RunnerLifecycleState s) {
    if (s.closeAfterLoss) {
      s.closeRequested = true;
      closeAfterLoss(s, true);
    } else {
      s.phase = new Contending();
      s.emit(new ElectorAfterLoss(true));
    }
  }

  /**
   * Closes after a loss whose stops are over ({@code clean}: every one returned without throwing, in time). The
   * elector still waits for the loss to be answered (its protocol is {@code LOST}), and the {@link FinishElector} is
   * that answer ({@code LeaseElector.finish}, {@code LeaseProtocol.finishAfterLoss}): after a clean stop it releases
   * the Lease if the loss left it as this replica last wrote it, a compare-and-set on that write (read back first
   * after a loss at the renew deadline), so that a write by anyone since wins and nothing is released. An {@link
   * ElectorAfterLoss} first would end the protocol with nothing to release, and the release would change nothing
   * (review h-relloss): it goes first only when there is nothing to release. After an unclean stop (one that threw
   * or outlived its deadline) the work may still run: the Lease is left to expire, never released.
   */
  static void closeAfterLoss(RunnerLifecycleState s, boolean clean) {
    if (!clean) {
      s.emit(new ElectorAfterLoss(false));
    }
    RunnerLifecycleEnding.finish(s, StopCause.CLOSED, Optional.empty(), clean);
  }

  static void lossHandled(RunnerLifecycleState s, LossHandled handled) {
    if (!(s.phase instanceof HandlingLoss)) {
      return; // closed while the handler ran
    }
    if (handled.contendAgain() && s.lossUnclean) {
      s.emit(s.lines.handlerAskedAfterUncleanLoss());
      s.emit(new ElectorAfterLoss(false));
      RunnerLifecycleEnding.finish(s, StopCause.LOST, Optional.empty(), false);
    } else if (handled.contendAgain()) {
      contendAgainOrClose(s);
    } else {
      s.emit(new ElectorAfterLoss(false));
      RunnerLifecycleEnding.finish(s, StopCause.LOST, Optional.empty(), false);
    }
  }
}
