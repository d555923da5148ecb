package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ElectionState.StopCause;
import io.github.electionpolicy.fabric8.RunnerLifecycleCommand.*;
import io.github.electionpolicy.fabric8.RunnerLifecycleInput.*;
import io.github.electionpolicy.fabric8.RunnerLifecyclePhase.*;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The runner's lifecycle as a pure state machine, in the shape of {@link LeaseProtocol}: one
 * {@link RunnerLifecyclePhase}, {@link RunnerLifecycleInput}s as values, {@link RunnerLifecycleCommand}s as values
 * (their log lines worded by {@link RunnerLifecycleLines}). It decides when services start and stop, what a loss,
 * a close, a failed start or a failure of the election logic leads to, when the Lease may be released and why
 * the runner stopped. It has no thread, lock, clock or logger: {@link LifecycleDriver} feeds it inputs on the
 * runner's loop and carries out the commands, in order.
 *
 * <p>The rules that keep one leader's work from overlapping another's:
 * <ul>
 *   <li>Services start only in {@link Leading} (or unelected), under that term, and never after a close.
 *   <li>The Lease is released only after every service's {@code stop()} returned normally, and neither a start
 *       nor a stop threw a {@link VirtualMachineError}; otherwise it is left to expire.
 *   <li>After a loss, the runner contends again only once every service stopped cleanly; a stop that threw or
 *       outlived {@code stopTimeout} ends contention for good ({@link StopCause#LOST}), since its work may still
 *       run.
 *   <li>Every stop of the services has a deadline, {@code stopTimeout}, under every loss policy and on close.
 * </ul>
 *
 * <p>This class is the entry point: it takes each input, holds the rules for starting and for the elector's news
 * (elected, following, finished), and hands the rest to the pure rules beside it, each over the one
 * {@link RunnerLifecycleState}: {@link RunnerLifecycleClosing} (a close, in every phase),
 * {@link RunnerLifecycleLoss} (a loss and the loss policy), {@link RunnerLifecycleStopping} (what a stop's outcome
 * leads to) and {@link RunnerLifecycleEnding} (a failure of the election logic, and how the runner stops for good).
 *
 * <p>Not thread-safe: one caller at a time (the runner's loop).
 */
final class RunnerLifecycle {

  private final RunnerLifecycleState s;

  RunnerLifecycle(RunnerLifecycleConfig config) {
    this.s = new RunnerLifecycleState(config);
  }

  RunnerLifecyclePhase phase() {
    return s.phase;
  }

  RunnerLifecycleServices services() {
    return s.services;
  }

  /** Whether a {@link VirtualMachineError} was thrown by a service. */
  boolean fatal() {
    return s.fatal;
  }

  /** Takes in one input; returns the commands it leads to, in order. */
  List<RunnerLifecycleCommand> step(RunnerLifecycleInput input) {
    s.out = new ArrayList<>();
    Objects.requireNonNull(input, "input");
    if (input instanceof Start start) {
      start(start);
    } else if (input instanceof PreflightDone done) {
      preflightDone(done);
    } else if (input instanceof Followed followed) {
      followed(followed);
    } else if (input instanceof Elected elected) {
      elected(elected);
    } else if (input instanceof Lost lost) {
      RunnerLifecycleLoss.lost(s, lost);
    } else if (input instanceof ElectorFinished) {
      electorFinished();
    } else if (input instanceof CloseRequested) {
      RunnerLifecycleClosing.close(s);
    } else if (input instanceof OwnerCloseRequested) {
      RunnerLifecycleClosing.ownerClose(s);
    } else if (input instanceof ServicesStarted started) {
      servicesStarted(started);
    } else if (input instanceof ServicesStopped stopped) {
      RunnerLifecycleStopping.servicesStopped(s, stopped.clean(), stopped.fatal(), false);
    } else if (input instanceof StopDeadline deadline) {
      RunnerLifecycleStopping.stopDeadline(s, deadline);
    } else if (input instanceof LossHandled handled) {
      RunnerLifecycleLoss.lossHandled(s, handled);
    } else if (input instanceof Exited) {
      exited();
    } else if (input instanceof ElectionFailed failed) {
      RunnerLifecycleEnding.electionFailed(s, failed.cause());
    }
    List<RunnerLifecycleCommand> commands = List.copyOf(s.out);
    s.out = null;
    return commands;
  }

  private void start(Start start) {
    if (!(s.phase instanceof Created)) {
      throw new IllegalStateException("start while " + s.phase);
    }
    if (!s.config.contends()) {
      LeadershipTerm unelected = start.unelectedTerm()
          .orElseThrow(() -> new IllegalArgumentException("running unelected needs its term"));
      s.term = unelected;
      s.phase = new Unelected(unelected);
      s.services = RunnerLifecycleServices.STARTING;
      s.emit(new StartServices(unelected));
    } else if (s.config.preflight()) {
      // The first read overlaps the access reviews: a read changes nothing, and the elector's writes wait for
      // the verdict (AllowWrites), so a denial still stops the runner before any write. The read goes out first:
      // on an empty Lease it is the first of the election's two round trips, the review only one beside it.
      s.phase = new Preflight();
      s.emit(new StartElectorWritesHeld());
      s.emit(new RunPreflight());
    } else {
      s.phase = new Contending();
      s.emit(new StartElector());
    }
  }

  private void preflightDone(PreflightDone done) {
    if (!(s.phase instanceof Preflight)) {
      return; // closed meanwhile: the answer is moot
    }
    if (done.denied().isEmpty() || s.config.flaw() == RunnerFlaw.PREFLIGHT_DENIAL_IGNORED) {
      s.phase = new Contending();
      if (s.followedInPreflight != null) {
        s.emit(new Publish(new ElectionState.Following(s.followedInPreflight)));
      }
      s.emit(new AllowWrites());
      return;
    }
    LeaseAccessDeniedException denied = done.denied().get();
    s.emit(s.lines.accessDenied(denied));
    // The elector only read: ended now, what it read (or reads next) leads to nothing.
    s.emit(new AbandonElector());
    s.electorDone = true;
    RunnerLifecycleEnding.stopOrExit(s, StopCause.ACCESS_DENIED, Optional.of(denied), "Not contending for Lease");
  }

  private void followed(Followed followed) {
    if (s.closeRequested) {
      return;
    }
    if (s.phase instanceof Preflight) {
      // Not shown before the verdict: a denied runner only starts and stops.
      s.followedInPreflight = followed.holder();
      return;
    }
    // While leading, the protocol says who holds the Lease now just before it reports the loss.
    if (s.phase instanceof Contending || s.phase instanceof Leading || s.phase instanceof Stopping stopping
        && stopping.reason() == StopReason.LOSS || s.phase instanceof HandlingLoss) {
      s.emit(new Publish(new ElectionState.Following(followed.holder())));
    }
  }

  private void elected(Elected elected) {
    boolean slip = s.config.flaw() == RunnerFlaw.START_WHILE_CLOSING && s.phase instanceof Finishing;
    if (!slip && (!(s.phase instanceof Contending) || s.closeRequested)) {
      return; // a take that landed while closing: the elector releases it when it finishes
    }
    s.term = elected.term();
    s.phase = new Leading(s.term);
    s.services = RunnerLifecycleServices.STARTING;
    s.emit(new Publish(new ElectionState.Leading(s.term)));
    s.emit(new StartServices(s.term));
  }

  private void electorFinished() {
    if (s.electorDone) {
      return;
    }
    s.electorDone = true;
    if (s.phase instanceof Finishing finishing) {
      RunnerLifecycleEnding.stopped(s, finishing.cause(), finishing.failure());
    } else if (s.phase instanceof Preflight || s.phase instanceof Contending || s.phase instanceof Leading) {
      // Nothing asked it to end: the runner would contend for nothing, for ever.
      RunnerLifecycleEnding.electionFailed(s, new IllegalStateException("the elector ended on its own"));
    }
  }

  private void servicesStarted(ServicesStarted started) {
    s.fatal |= started.fatal();
    if (s.services == RunnerLifecycleServices.STOPPING || s.services == RunnerLifecycleServices.HUNG) {
      // A stop is queued behind this start: it stops whatever the start left running.
      if (!s.config.contends() && !(s.phase instanceof Stopping stopping
          && stopping.reason() == StopReason.START_FAILED)) {
        s.emit(new StartCompleted(started.failure()));
      }
      return;
    }
    if (s.services != RunnerLifecycleServices.STARTING) {
      return;
    }
    switch (started.kind()) {
      case STARTED -> {
        s.services = RunnerLifecycleServices.RUNNING;
        if (!s.config.contends()) {
          s.emit(new StartCompleted(Optional.empty()));
        }
      }
      case TERM_ENDED ->
        // The term ended while starting (it lapsed, or a close ended it): what started runs until the loss or the
        // close that ended the term stops it.
        s.services = RunnerLifecycleServices.RUNNING;
      case FAILED -> {
        if (!s.config.contends() && s.config.flaw() == RunnerFlaw.UNELECTED_FAILED_START_LEAVES_SERVICES) {
          s.emit(new StartCompleted(started.failure()));
          RunnerLifecycleEnding.stopped(s, StopCause.START_FAILED, started.failure());
          return;
        }
        if (!s.config.contends()) {
          // start() throws once what did start has stopped (or the stop outlived its deadline).
          s.stopServices();
          s.phase = new Stopping(StopReason.START_FAILED, started.failure());
          return;
        }
        if (s.phase instanceof Leading) {
          s.stopServices();
          s.relinquishAfterStop = true;
        }
      }
    }
  }

  private void exited() {
    if (s.phase instanceof Exiting exiting) {
      RunnerLifecycleEnding.stopped(s, exiting.cause(), exiting.failure());
    }
  }

  @Override
  public String toString() {
    return "RunnerLifecycle{" + s.phase + ", services " + s.services + (s.closeRequested ? ", closing" : "") + "}";
  }
}
