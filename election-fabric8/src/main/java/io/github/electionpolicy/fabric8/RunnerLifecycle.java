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
 * <p>Not thread-safe: one caller at a time (the runner's loop).
 */
final class RunnerLifecycle {

  private final RunnerLifecycleConfig config;
  private final RunnerLifecycleLines lines;
  private RunnerLifecyclePhase phase = new Created();
  private RunnerLifecycleServices services = RunnerLifecycleServices.IDLE;
  private boolean closeRequested;
  private boolean electorDone;
  private boolean fatal;
  // A stop failure not yet counted by a stop the lifecycle waits for (stops made by a start that failed or
  // whose term ended).
  private boolean unreportedUnclean;
  private int stopNumber;
  private LeadershipTerm term;
  private LeadershipTerm lastLostTerm;
  // Whether a service's stop failed after the loss the handler is asked about: then it may not contend again.
  private boolean lossUnclean;
  // A leader's start failed: once the services it started have stopped, the term is given up.
  private boolean relinquishAfterStop;
  private ElectionState published = new ElectionState.Starting();
  // Whom the elector followed while the preflight ran (null: it said nothing yet), published once it may contend.
  private Optional<String> followedInPreflight;
  private List<RunnerLifecycleCommand> out;

  RunnerLifecycle(RunnerLifecycleConfig config) {
    this.config = Objects.requireNonNull(config, "config");
    this.lines = new RunnerLifecycleLines(config);
  }

  RunnerLifecyclePhase phase() {
    return phase;
  }

  RunnerLifecycleServices services() {
    return services;
  }

  /** Whether a {@link VirtualMachineError} was thrown by a service. */
  boolean fatal() {
    return fatal;
  }

  /** Takes in one input; returns the commands it leads to, in order. */
  List<RunnerLifecycleCommand> step(RunnerLifecycleInput input) {
    out = new ArrayList<>();
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
      lost(lost);
    } else if (input instanceof ElectorFinished) {
      electorFinished();
    } else if (input instanceof CloseRequested) {
      close();
    } else if (input instanceof ServicesStarted started) {
      servicesStarted(started);
    } else if (input instanceof ServicesStopped stopped) {
      servicesStopped(stopped.clean(), stopped.fatal(), false);
    } else if (input instanceof StopDeadline deadline) {
      stopDeadline(deadline);
    } else if (input instanceof LossHandled handled) {
      lossHandled(handled);
    } else if (input instanceof Exited) {
      exited();
    } else if (input instanceof ElectionFailed failed) {
      electionFailed(failed.cause());
    }
    List<RunnerLifecycleCommand> commands = List.copyOf(out);
    out = null;
    return commands;
  }

  private void start(Start start) {
    if (!(phase instanceof Created)) {
      throw new IllegalStateException("start while " + phase);
    }
    if (!config.contends()) {
      LeadershipTerm unelected = start.unelectedTerm()
          .orElseThrow(() -> new IllegalArgumentException("running unelected needs its term"));
      term = unelected;
      phase = new Unelected(unelected);
      services = RunnerLifecycleServices.STARTING;
      emit(new StartServices(unelected));
    } else if (config.preflight()) {
      // The first read overlaps the access reviews: a read changes nothing, and the elector's writes wait for
      // the verdict (AllowWrites), so a denial still stops the runner before any write.
      phase = new Preflight();
      emit(new RunPreflight());
      emit(new StartElectorWritesHeld());
    } else {
      phase = new Contending();
      emit(new StartElector());
    }
  }

  private void preflightDone(PreflightDone done) {
    if (!(phase instanceof Preflight)) {
      return; // closed meanwhile: the answer is moot
    }
    if (done.denied().isEmpty() || config.flaw() == RunnerFlaw.PREFLIGHT_DENIAL_IGNORED) {
      phase = new Contending();
      if (followedInPreflight != null) {
        emit(new Publish(new ElectionState.Following(followedInPreflight)));
      }
      emit(new AllowWrites());
      return;
    }
    LeaseAccessDeniedException denied = done.denied().get();
    emit(lines.accessDenied(denied));
    // The elector only read: ended now, what it read (or reads next) leads to nothing.
    emit(new AbandonElector());
    electorDone = true;
    stopOrExit(StopCause.ACCESS_DENIED, Optional.of(denied), "Not contending for Lease");
  }

  private void followed(Followed followed) {
    if (closeRequested) {
      return;
    }
    if (phase instanceof Preflight) {
      followedInPreflight = followed.holder(); // not shown before the verdict: a denied runner only starts and stops
      return;
    }
    // While leading, the protocol says who holds the Lease now just before it reports the loss.
    if (phase instanceof Contending || phase instanceof Leading || phase instanceof Stopping stopping
        && stopping.reason() == StopReason.LOSS || phase instanceof HandlingLoss) {
      emit(new Publish(new ElectionState.Following(followed.holder())));
    }
  }

  private void elected(Elected elected) {
    boolean slip = config.flaw() == RunnerFlaw.START_WHILE_CLOSING && phase instanceof Finishing;
    if (!slip && (!(phase instanceof Contending) || closeRequested)) {
      return; // a take that landed while closing: the elector releases it when it finishes
    }
    term = elected.term();
    phase = new Leading(term);
    services = RunnerLifecycleServices.STARTING;
    emit(new Publish(new ElectionState.Leading(term)));
    emit(new StartServices(term));
  }

  private void lost(Lost lost) {
    if (phase instanceof Leading) {
      lastLostTerm = lost.term();
      emit(new EndTerm(lost.term()));
      if (published.kind() == ElectionState.Kind.LEADING) {
        // The holder is unknown unless the protocol just said who took the Lease.
        emit(new Publish(new ElectionState.Following(Optional.empty())));
      }
      term = null;
      relinquishAfterStop = false;
      if (config.flaw() == RunnerFlaw.LOSS_HANDLER_BEFORE_STOP && config.policy() == LossPolicy.Kind.CUSTOM
          && services.active()) {
        lossUnclean = false;
        phase = new HandlingLoss();
        emit(new CallLossHandler(lastLostTerm));
        stopServices();
        return;
      }
      phase = new Stopping(StopReason.LOSS, Optional.empty());
      if (services.active()) {
        stopServices();
      } else if (services != RunnerLifecycleServices.STOPPING) {
        // A failed start's services have stopped (or outlived their deadline): react to the loss at once. (While
        // the stop after a failed start is in flight, its outcome decides.)
        boolean hung = services == RunnerLifecycleServices.HUNG;
        afterLossStops(!unreportedUnclean && !hung, hung);
        unreportedUnclean = false;
      }
      return;
    }
    if (phase instanceof Stopping stopping && stopping.reason() == StopReason.CLOSE) {
      // Closing, its services still stopping: the FinishElector that follows their stops answers the loss, and
      // releases the Lease if they stopped cleanly and the loss left the Lease as this replica last wrote it.
      return;
    }
    // A loss while closing (or after the runner gave up): it ends the loop; closing is not a loss.
    emit(new ElectorAfterLoss(false));
  }

  private void electorFinished() {
    if (electorDone) {
      return;
    }
    electorDone = true;
    if (phase instanceof Finishing finishing) {
      stopped(finishing.cause(), finishing.failure());
    } else if (phase instanceof Preflight || phase instanceof Contending || phase instanceof Leading) {
      // Nothing asked it to end: the runner would contend for nothing, for ever.
      electionFailed(new IllegalStateException("the elector ended on its own"));
    }
  }

  private void close() {
    if (closeRequested) {
      return; // close twice
    }
    closeRequested = true;
    if (phase instanceof Created) {
      stopped(StopCause.CLOSED, Optional.empty());
    } else if (phase instanceof Unelected) {
      emit(new EndTerm(term));
      closeServicesThen();
    } else if (phase instanceof Preflight) {
      emit(new AbandonElector()); // it has written nothing: there is nothing to release
      electorDone = true;
      stopped(StopCause.CLOSED, Optional.empty());
    } else if (phase instanceof Contending) {
      emit(new CloseElector());
      closeServicesThen();
    } else if (phase instanceof Leading) {
      emit(new EndTerm(term));
      emit(new CloseElector());
      if (config.flaw() == RunnerFlaw.RELEASE_BEFORE_STOP) {
        emit(new FinishElector(true));
      }
      closeServicesThen();
    } else if (phase instanceof Stopping stopping) {
      if (stopping.reason() == StopReason.LOSS) {
        // The elector waits for the loss to be handled: closing is the answer.
        emit(new ElectorAfterLoss(false));
        phase = new Stopping(StopReason.CLOSE, Optional.empty());
      }
      // A failed election keeps its cause; closeRequested keeps it from exiting.
    } else if (phase instanceof HandlingLoss) {
      // The handler's answer no longer matters; the services are stopped.
      emit(new ElectorAfterLoss(false));
      finish(StopCause.CLOSED, Optional.empty(), true);
    } else if (phase instanceof Exiting exiting) {
      // The exiter may never return (System.exit runs the shutdown hook that called close()).
      stopped(exiting.cause(), exiting.failure());
    }
    // Finishing, Stopped: already on the way out.
  }

  /** On close: stop the services if any run, then finish; or finish at once. */
  private void closeServicesThen() {
    relinquishAfterStop = false;
    if (services.active()) {
      stopServices();
      phase = new Stopping(StopReason.CLOSE, Optional.empty());
    } else if (services == RunnerLifecycleServices.STOPPING) {
      // A stop is in flight (after a failed start): the Lease waits for its outcome, under its deadline.
      phase = new Stopping(StopReason.CLOSE, Optional.empty());
    } else {
      boolean clean = !unreportedUnclean && services != RunnerLifecycleServices.HUNG;
      unreportedUnclean = false;
      finish(StopCause.CLOSED, Optional.empty(), clean);
    }
  }

  private void servicesStarted(ServicesStarted started) {
    fatal |= started.fatal();
    if (services == RunnerLifecycleServices.STOPPING || services == RunnerLifecycleServices.HUNG) {
      // A stop is queued behind this start: it stops whatever the start left running.
      if (!config.contends() && !(phase instanceof Stopping stopping
          && stopping.reason() == StopReason.START_FAILED)) {
        emit(new StartCompleted(started.failure()));
      }
      return;
    }
    if (services != RunnerLifecycleServices.STARTING) {
      return;
    }
    switch (started.kind()) {
      case STARTED -> {
        services = RunnerLifecycleServices.RUNNING;
        if (!config.contends()) {
          emit(new StartCompleted(Optional.empty()));
        }
      }
      case TERM_ENDED ->
        // The term ended while starting (it lapsed, or a close ended it): what started runs until the loss or the
        // close that ended the term stops it.
        services = RunnerLifecycleServices.RUNNING;
      case FAILED -> {
        if (!config.contends() && config.flaw() == RunnerFlaw.UNELECTED_FAILED_START_LEAVES_SERVICES) {
          emit(new StartCompleted(started.failure()));
          stopped(StopCause.START_FAILED, started.failure());
          return;
        }
        if (!config.contends()) {
          // start() throws once what did start has stopped (or the stop outlived its deadline).
          stopServices();
          phase = new Stopping(StopReason.START_FAILED, started.failure());
          return;
        }
        if (phase instanceof Leading) {
          stopServices();
          relinquishAfterStop = true;
        }
      }
    }
  }

  private void stopDeadline(StopDeadline deadline) {
    if (deadline.stop() != stopNumber || services != RunnerLifecycleServices.STOPPING) {
      return; // an older stop's deadline, or the stop already returned
    }
    services = RunnerLifecycleServices.HUNG;
    servicesStopped(false, false, true);
  }

  /** A stop returned ({@code timedOut} false) or outlived its deadline ({@code timedOut} true). */
  private void servicesStopped(boolean stopClean, boolean stopFatal, boolean timedOut) {
    fatal |= stopFatal;
    if (!timedOut) {
      if (services == RunnerLifecycleServices.HUNG) {
        services = RunnerLifecycleServices.IDLE; // the hung stop returned at last; nothing waits for it any more
        return;
      }
      if (services != RunnerLifecycleServices.STOPPING) {
        return;
      }
      services = RunnerLifecycleServices.IDLE;
    }
    boolean clean = stopClean && !unreportedUnclean && !timedOut;
    unreportedUnclean = false;
    if (phase instanceof Leading leading && relinquishAfterStop) {
      relinquishAfterStop = false;
      boolean release = clean && !fatal;
      if (!release) {
        emit(lines.failedStartNotReleased(fatal, timedOut));
      }
      // What the loss reaction then hears: a stop that threw or hung after the failed start is unclean.
      unreportedUnclean = !clean;
      emit(new Relinquish(leading.term(), release));
      return;
    }
    if (!(phase instanceof Stopping stopping)) {
      return;
    }
    switch (stopping.reason()) {
      case CLOSE -> {
        if (!clean) {
          emit(lines.closeUnclean(timedOut));
        }
        finish(StopCause.CLOSED, Optional.empty(), clean
            || timedOut && config.flaw() == RunnerFlaw.RELEASE_AFTER_HUNG_STOP);
      }
      case LOSS -> afterLossStops(clean, timedOut);
      case START_FAILED -> {
        if (!clean) {
          emit(lines.startFailedUnclean(timedOut));
        }
        emit(new StartCompleted(stopping.failure()));
        stopped(StopCause.START_FAILED, stopping.failure());
      }
      case ELECTION_FAILED -> {
        if (!clean) {
          emit(lines.electionFailedUnclean(timedOut));
        }
        stopOrExit(StopCause.ELECTION_FAILED, stopping.failure(), "Election failed for Lease");
      }
    }
  }

  /** The services stopped (or gave up on) after a loss: apply the loss policy. */
  private void afterLossStops(boolean clean, boolean timedOut) {
    switch (config.policy()) {
      case EXIT -> {
        if (!clean) {
          emit(lines.exitingUnclean(timedOut));
        }
        emit(new ElectorAfterLoss(false));
        electorDone = true;
        exit(StopCause.LOST, Optional.empty(), "Lost leadership of Lease");
      }
      case RECONTEND, CUSTOM -> {
        if (config.policy() == LossPolicy.Kind.CUSTOM && !timedOut && !fatal) {
          // The handler hears every loss whose stops returned; after one that threw it may not contend again.
          lossUnclean = !clean;
          phase = new HandlingLoss();
          emit(new CallLossHandler(lastLostTerm));
        } else if (!clean) {
          emit(lines.lossUnclean(timedOut));
          emit(new ElectorAfterLoss(false));
          finish(StopCause.LOST, Optional.empty(), false);
        } else if (fatal) {
          emit(lines.lossFatal());
          emit(new ElectorAfterLoss(false));
          finish(StopCause.LOST, Optional.empty(), false);
        } else {
          phase = new Contending();
          emit(new ElectorAfterLoss(true));
        }
      }
    }
  }

  private void lossHandled(LossHandled handled) {
    if (!(phase instanceof HandlingLoss)) {
      return; // closed while the handler ran
    }
    if (handled.contendAgain() && lossUnclean) {
      emit(lines.handlerAskedAfterUncleanLoss());
      emit(new ElectorAfterLoss(false));
      finish(StopCause.LOST, Optional.empty(), false);
    } else if (handled.contendAgain()) {
      phase = new Contending();
      emit(new ElectorAfterLoss(true));
    } else {
      emit(new ElectorAfterLoss(false));
      finish(StopCause.LOST, Optional.empty(), false);
    }
  }

  private void exited() {
    if (phase instanceof Exiting exiting) {
      stopped(exiting.cause(), exiting.failure());
    }
  }

  private void electionFailed(Throwable cause) {
    Objects.requireNonNull(cause, "cause");
    electorDone = true;
    if (phase instanceof Stopped || phase instanceof Exiting) {
      return;
    }
    if (phase instanceof Finishing finishing) {
      stopped(finishing.cause(), finishing.failure()); // loop death during close: nothing is left to finish
      return;
    }
    if (closeRequested) {
      if (!(phase instanceof Stopping)) {
        stopped(StopCause.CLOSED, Optional.empty());
      }
      return; // the close's stop is in flight; it finishes with the elector already gone
    }
    emit(lines.electionFailed(cause));
    if (phase instanceof Preflight) {
      emit(new AbandonElector()); // it reads beside the preflight; it has written nothing
    }
    if (term != null) {
      // Elected or not: the services stop next, and their term must not outlive the runner.
      emit(new EndTerm(term));
      term = null;
    }
    if (published.kind() == ElectionState.Kind.LEADING) {
      emit(new Publish(new ElectionState.Following(Optional.empty())));
    }
    Optional<Throwable> failure = Optional.of(cause);
    if (config.flaw() == RunnerFlaw.FAILURE_LEAVES_SERVICES) {
      stopOrExit(StopCause.ELECTION_FAILED, failure, "Election failed for Lease");
    } else if (services.active()) {
      stopServices();
      phase = new Stopping(StopReason.ELECTION_FAILED, failure);
    } else if (services == RunnerLifecycleServices.STOPPING) {
      phase = new Stopping(StopReason.ELECTION_FAILED, failure);
    } else {
      stopOrExit(StopCause.ELECTION_FAILED, failure, "Election failed for Lease");
    }
  }

  private void stopServices() {
    services = RunnerLifecycleServices.STOPPING;
    stopNumber++;
    emit(new StopServices(stopNumber));
  }

  /** Stops for good: through the exiter under {@code EXIT}, else at once (after the elector finished). */
  private void stopOrExit(StopCause cause, Optional<Throwable> failure, String why) {
    // Never once closing: closing is not a loss, and an exit from a shutdown hook's close() would deadlock.
    // Nor running unelected: there is no loss, and the settings' loss policy is not used then.
    if (config.policy() == LossPolicy.Kind.EXIT && !closeRequested && config.contends()) {
      exit(cause, failure, why);
    } else {
      finish(cause, failure, false);
    }
  }

  private void exit(StopCause cause, Optional<Throwable> failure, String why) {
    phase = new Exiting(cause, failure);
    emit(new Exit(why));
  }

  /** Ends the elector (releasing when {@code release}), then stops with {@code cause}. */
  private void finish(StopCause cause, Optional<Throwable> failure, boolean release) {
    phase = new Finishing(cause, failure);
    if (electorDone || !config.contends()) {
      stopped(cause, failure);
      return;
    }
    emit(new FinishElector(release && !fatal));
  }

  private void stopped(StopCause cause, Optional<Throwable> failure) {
    phase = new Stopped(cause);
    term = null;
    emit(new ReportStopped(cause, failure));
  }

  private void emit(RunnerLifecycleCommand command) {
    if (command instanceof Publish publish) {
      published = publish.state();
    }
    out.add(command);
  }

  @Override
  public String toString() {
    return "RunnerLifecycle{" + phase + ", services " + services + (closeRequested ? ", closing" : "") + "}";
  }
}
