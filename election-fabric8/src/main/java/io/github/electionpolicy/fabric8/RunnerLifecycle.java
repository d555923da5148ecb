package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ElectionState.StopCause;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The runner's lifecycle as a pure state machine, in the shape of {@link LeaseProtocol}: one {@link Phase},
 * {@link Input}s as values, {@link Command}s as values. It decides when services start and stop, what a loss,
 * a close, a failed start or a failure of the election logic leads to, when the Lease may be released and why
 * the runner stopped. It has no thread, lock, clock or logger: {@link LifecycleDriver} feeds it inputs on the
 * runner's loop and carries out the commands, in order.
 *
 * <p>The rules that keep one leader's work from overlapping another's:
 * <ul>
 *   <li>Services start only in {@link Phase.Leading} (or unelected), under that term, and never after a close.
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

  /** What a runner's lifecycle is fixed to at start. */
  record Config(boolean contends, boolean preflight, LossPolicy.Kind policy, String lease, String stopTimeout,
      RunnerFlaw flaw) {
    Config(boolean contends, boolean preflight, LossPolicy.Kind policy, String lease, String stopTimeout) {
      this(contends, preflight, policy, lease, stopTimeout, RunnerFlaw.NONE);
    }

    Config {
      Objects.requireNonNull(flaw, "flaw");
      Objects.requireNonNull(policy, "policy");
      Objects.requireNonNull(lease, "lease");
      Objects.requireNonNull(stopTimeout, "stopTimeout");
    }
  }

  /** Where the services stand, as far as the lifecycle knows. */
  enum Services {
    /** None runs, and no start or stop is in flight. */
    IDLE,
    /** A start is in flight. */
    STARTING,
    /** Every service started and none is stopping. */
    RUNNING,
    /** A stop is in flight, within its deadline. */
    STOPPING,
    /** A stop outlived its deadline: a service may still run, and the runner no longer waits for it. */
    HUNG
  }

  /** Why the services are being stopped. */
  enum StopReason {
    CLOSE, LOSS, ELECTION_FAILED, START_FAILED
  }

  // ---- phases ----------------------------------------------------------------------------------------------

  /** Where the runner stands. */
  sealed interface Phase {
    /** Built, not started. */
    record Created() implements Phase {}

    /** Running unelected, under {@code term} (never elected, valid until closed). */
    record Unelected(LeadershipTerm term) implements Phase {}

    /** The RBAC preflight runs; nothing is contended yet. */
    record Preflight() implements Phase {}

    /** Contending without the Lease: the elector reads, watches and tries to take it. */
    record Contending() implements Phase {}

    /** Holding the Lease under {@code term}; the services start or run. */
    record Leading(LeadershipTerm term) implements Phase {}

    /** The services are being stopped, for {@code reason}; {@code failure} is set for a failed election. */
    record Stopping(StopReason reason, Optional<Throwable> failure) implements Phase {}

    /** The loss handler runs, after the services stopped. */
    record HandlingLoss() implements Phase {}

    /** The exiter runs; then the runner stops with {@code cause}. */
    record Exiting(StopCause cause, Optional<Throwable> failure) implements Phase {}

    /** The elector finishes (releases, abandons, or just ends); then the runner stops with {@code cause}. */
    record Finishing(StopCause cause, Optional<Throwable> failure) implements Phase {}

    /** Stopped for good. */
    record Stopped(StopCause cause) implements Phase {}
  }

  // ---- inputs ----------------------------------------------------------------------------------------------

  /** What happened. */
  sealed interface Input {}

  /** {@code start()} was called; running unelected, under {@code unelectedTerm}. */
  record Start(Optional<LeadershipTerm> unelectedTerm) implements Input {}

  /** The RBAC preflight answered: empty when the runner may contend. */
  record PreflightDone(Optional<LeaseAccessDeniedException> denied) implements Input {}

  /** The elector follows {@code holder} (empty: none known, or the Lease is free). */
  record Followed(Optional<String> holder) implements Input {}

  /** The elector won {@code term}. */
  record Elected(LeadershipTerm term) implements Input {}

  /** The elector lost {@code term} and waits for {@link Command.ElectorAfterLoss}. */
  record Lost(LeadershipTerm term) implements Input {}

  /** The elector's loop ended: it sends nothing more. */
  record ElectorFinished() implements Input {}

  /** {@code close()} was called. */
  record CloseRequested() implements Input {}

  /**
   * A start of the services returned: {@code kind} as {@link ServiceSequence} reports it, whether a
   * {@link VirtualMachineError} was thrown, and what the failing start threw. The services it started still run
   * after a failure or an ended term: the lifecycle stops them, with its deadline.
   */
  record ServicesStarted(ServiceSequence.StartKind kind, boolean fatal, Optional<Throwable> failure)
      implements Input {}

  /** A stop of the services returned; {@code clean} when no {@code stop()} threw. */
  record ServicesStopped(boolean clean, boolean fatal) implements Input {}

  /** The stop numbered {@code stop} outlived its deadline. */
  record StopDeadline(int stop) implements Input {}

  /** The loss handler returned (or threw: {@code contendAgain} false). */
  record LossHandled(boolean contendAgain) implements Input {}

  /** The exiter returned (or threw). */
  record Exited() implements Input {}

  /** The election logic failed: the elector is gone. */
  record ElectionFailed(Throwable cause) implements Input {}

  // ---- commands --------------------------------------------------------------------------------------------

  /** What to do, in order. */
  sealed interface Command {
    /** Publish a state to readers and listeners (a state equal to the current one is not published again). */
    record Publish(ElectionState state) implements Command {}

    /** Start the services under {@code term}. */
    record StartServices(LeadershipTerm term) implements Command {}

    /** Stop the services; report {@link StopDeadline} with {@code stop} after {@code stopTimeout}. */
    record StopServices(int stop) implements Command {}

    /** End {@code term}: from now on it reports not valid. */
    record EndTerm(LeadershipTerm term) implements Command {}

    /** Run the RBAC preflight. */
    record RunPreflight() implements Command {}

    /** Start the elector. */
    record StartElector() implements Command {}

    /** Stop acquiring: a leader keeps renewing until {@link FinishElector}. */
    record CloseElector() implements Command {}

    /** End the elector's loop; a leader releases the Lease when {@code release}, else leaves it to expire. */
    record FinishElector(boolean release) implements Command {}

    /** Give {@code term} up as lost (a service failed to start); release first when {@code release}. */
    record Relinquish(LeadershipTerm term, boolean release) implements Command {}

    /** The loss was handled: contend again, or end the loop. */
    record ElectorAfterLoss(boolean contendAgain) implements Command {}

    /** Call the loss handler for {@code term}. */
    record CallLossHandler(LeadershipTerm term) implements Command {}

    /** Call the exiter with {@link LossPolicy#LOSS_EXIT_STATUS}. */
    record Exit(String why) implements Command {}

    /** The unelected start is over; {@code failure} is what a service's start threw, if one did. */
    record StartCompleted(Optional<Throwable> failure) implements Command {}

    /** A log line. */
    record Log(Level level, String message) implements Command {}

    /** The last command: publish {@code STOPPED} with this cause and end the runner's I/O and timers. */
    record ReportStopped(StopCause cause, Optional<Throwable> failure) implements Command {}
  }

  /** The level of a {@link Command.Log} line. */
  enum Level {
    INFO, WARN, ERROR
  }

  private final Config config;
  private Phase phase = new Phase.Created();
  private Services services = Services.IDLE;
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
  private List<Command> out;

  RunnerLifecycle(Config config) {
    this.config = Objects.requireNonNull(config, "config");
  }

  Phase phase() {
    return phase;
  }

  Services services() {
    return services;
  }

  /** Whether a {@link VirtualMachineError} was thrown by a service. */
  boolean fatal() {
    return fatal;
  }

  /** Takes in one input; returns the commands it leads to, in order. */
  List<Command> step(Input input) {
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
    List<Command> commands = List.copyOf(out);
    out = null;
    return commands;
  }

  // ---- transitions -----------------------------------------------------------------------------------------

  private void start(Start start) {
    if (!(phase instanceof Phase.Created)) {
      throw new IllegalStateException("start while " + phase);
    }
    if (!config.contends()) {
      LeadershipTerm unelected = start.unelectedTerm()
          .orElseThrow(() -> new IllegalArgumentException("running unelected needs its term"));
      term = unelected;
      phase = new Phase.Unelected(unelected);
      services = Services.STARTING;
      emit(new Command.StartServices(unelected));
    } else if (config.preflight()) {
      phase = new Phase.Preflight();
      emit(new Command.RunPreflight());
    } else {
      phase = new Phase.Contending();
      emit(new Command.StartElector());
    }
  }

  private void preflightDone(PreflightDone done) {
    if (!(phase instanceof Phase.Preflight)) {
      return; // closed meanwhile: the answer is moot
    }
    if (done.denied().isEmpty() || config.flaw() == RunnerFlaw.PREFLIGHT_DENIAL_IGNORED) {
      phase = new Phase.Contending();
      emit(new Command.StartElector());
      return;
    }
    LeaseAccessDeniedException denied = done.denied().get();
    emit(new Command.Log(Level.ERROR, "Not contending for Lease " + config.lease() + ": " + denied.getMessage()));
    electorDone = true;
    stopOrExit(StopCause.ACCESS_DENIED, Optional.of(denied), "Not contending for Lease");
  }

  private void followed(Followed followed) {
    if (closeRequested) {
      return;
    }
    // While leading, the protocol says who holds the Lease now just before it reports the loss.
    if (phase instanceof Phase.Contending || phase instanceof Phase.Leading || phase instanceof Phase.Stopping stopping
        && stopping.reason() == StopReason.LOSS || phase instanceof Phase.HandlingLoss) {
      emit(new Command.Publish(new ElectionState.Following(followed.holder())));
    }
  }

  private void elected(Elected elected) {
    boolean slip = config.flaw() == RunnerFlaw.START_WHILE_CLOSING && phase instanceof Phase.Finishing;
    if (!slip && (!(phase instanceof Phase.Contending) || closeRequested)) {
      return; // a take that landed while closing: the elector releases it when it finishes
    }
    term = elected.term();
    phase = new Phase.Leading(term);
    services = Services.STARTING;
    emit(new Command.Publish(new ElectionState.Leading(term)));
    emit(new Command.StartServices(term));
  }

  private void lost(Lost lost) {
    if (phase instanceof Phase.Leading) {
      lastLostTerm = lost.term();
      emit(new Command.EndTerm(lost.term()));
      if (published.kind() == ElectionState.Kind.LEADING) {
        // The holder is unknown unless the protocol just said who took the Lease.
        emit(new Command.Publish(new ElectionState.Following(Optional.empty())));
      }
      term = null;
      relinquishAfterStop = false;
      if (config.flaw() == RunnerFlaw.LOSS_HANDLER_BEFORE_STOP && config.policy() == LossPolicy.Kind.CUSTOM
          && (services == Services.STARTING || services == Services.RUNNING)) {
        lossUnclean = false;
        phase = new Phase.HandlingLoss();
        emit(new Command.CallLossHandler(lastLostTerm));
        stopServices();
        return;
      }
      if (services == Services.STARTING || services == Services.RUNNING) {
        stopServices();
        phase = new Phase.Stopping(StopReason.LOSS, Optional.empty());
      } else if (services == Services.STOPPING) {
        // The stop after a failed start is in flight: its outcome decides.
        phase = new Phase.Stopping(StopReason.LOSS, Optional.empty());
      } else {
        // A failed start's services have stopped (or outlived their deadline): react to the loss at once.
        phase = new Phase.Stopping(StopReason.LOSS, Optional.empty());
        boolean hung = services == Services.HUNG;
        afterLossStops(!unreportedUnclean && !hung, hung);
        unreportedUnclean = false;
      }
      return;
    }
    if (phase instanceof Phase.Stopping stopping && stopping.reason() == StopReason.CLOSE) {
      // Closing, its services still stopping: the FinishElector that follows their stops answers the loss, and
      // releases the Lease if they stopped cleanly and the loss left the Lease as this replica last wrote it.
      return;
    }
    // A loss while closing (or after the runner gave up): it ends the loop; closing is not a loss.
    emit(new Command.ElectorAfterLoss(false));
  }

  private void electorFinished() {
    if (electorDone) {
      return;
    }
    electorDone = true;
    if (phase instanceof Phase.Finishing finishing) {
      stopped(finishing.cause(), finishing.failure());
    } else if (phase instanceof Phase.Contending || phase instanceof Phase.Leading) {
      // Nothing asked it to end: the runner would contend for nothing, for ever.
      electionFailed(new IllegalStateException("the elector ended on its own"));
    }
  }

  private void close() {
    if (closeRequested) {
      return; // close twice
    }
    closeRequested = true;
    if (phase instanceof Phase.Created) {
      stopped(StopCause.CLOSED, Optional.empty());
    } else if (phase instanceof Phase.Unelected) {
      emit(new Command.EndTerm(term));
      closeServicesThen();
    } else if (phase instanceof Phase.Preflight) {
      electorDone = true;
      stopped(StopCause.CLOSED, Optional.empty());
    } else if (phase instanceof Phase.Contending) {
      emit(new Command.CloseElector());
      closeServicesThen();
    } else if (phase instanceof Phase.Leading) {
      emit(new Command.EndTerm(term));
      emit(new Command.CloseElector());
      if (config.flaw() == RunnerFlaw.RELEASE_BEFORE_STOP) {
        emit(new Command.FinishElector(true));
      }
      closeServicesThen();
    } else if (phase instanceof Phase.Stopping stopping) {
      if (stopping.reason() == StopReason.LOSS) {
        // The elector waits for the loss to be handled: closing is the answer.
        emit(new Command.ElectorAfterLoss(false));
        phase = new Phase.Stopping(StopReason.CLOSE, Optional.empty());
      }
      // A failed election keeps its cause; closeRequested keeps it from exiting.
    } else if (phase instanceof Phase.HandlingLoss) {
      // The handler's answer no longer matters; the services are stopped.
      emit(new Command.ElectorAfterLoss(false));
      finish(StopCause.CLOSED, Optional.empty(), true);
    } else if (phase instanceof Phase.Exiting exiting) {
      // The exiter may never return (System.exit runs the shutdown hook that called close()).
      stopped(exiting.cause(), exiting.failure());
    }
    // Finishing, Stopped: already on the way out.
  }

  /** On close: stop the services if any run, then finish; or finish at once. */
  private void closeServicesThen() {
    relinquishAfterStop = false;
    if (services == Services.STARTING || services == Services.RUNNING) {
      stopServices();
      phase = new Phase.Stopping(StopReason.CLOSE, Optional.empty());
    } else if (services == Services.STOPPING) {
      // A stop is in flight (after a failed start): the Lease waits for its outcome, under its deadline.
      phase = new Phase.Stopping(StopReason.CLOSE, Optional.empty());
    } else {
      boolean clean = !unreportedUnclean && services != Services.HUNG;
      unreportedUnclean = false;
      finish(StopCause.CLOSED, Optional.empty(), clean);
    }
  }

  private void servicesStarted(ServicesStarted started) {
    fatal |= started.fatal();
    if (services == Services.STOPPING || services == Services.HUNG) {
      // A stop is queued behind this start: it stops whatever the start left running.
      if (!config.contends() && !(phase instanceof Phase.Stopping stopping
          && stopping.reason() == StopReason.START_FAILED)) {
        emit(new Command.StartCompleted(started.failure()));
      }
      return;
    }
    if (services != Services.STARTING) {
      return;
    }
    switch (started.kind()) {
      case STARTED -> {
        services = Services.RUNNING;
        if (!config.contends()) {
          emit(new Command.StartCompleted(Optional.empty()));
        }
      }
      case TERM_ENDED ->
        // The term ended while starting (it lapsed, or a close ended it): what started runs until the loss or the
        // close that ended the term stops it.
        services = Services.RUNNING;
      case FAILED -> {
        if (!config.contends() && config.flaw() == RunnerFlaw.UNELECTED_FAILED_START_LEAVES_SERVICES) {
          emit(new Command.StartCompleted(started.failure()));
          stopped(StopCause.START_FAILED, started.failure());
          return;
        }
        if (!config.contends()) {
          // start() throws once what did start has stopped (or the stop outlived its deadline).
          stopServices();
          phase = new Phase.Stopping(StopReason.START_FAILED, started.failure());
          return;
        }
        if (phase instanceof Phase.Leading) {
          stopServices();
          relinquishAfterStop = true;
        }
      }
    }
  }

  private void stopDeadline(StopDeadline deadline) {
    if (deadline.stop() != stopNumber || services != Services.STOPPING) {
      return; // an older stop's deadline, or the stop already returned
    }
    services = Services.HUNG;
    servicesStopped(false, false, true);
  }

  /** A stop returned ({@code timedOut} false) or outlived its deadline ({@code timedOut} true). */
  private void servicesStopped(boolean stopClean, boolean stopFatal, boolean timedOut) {
    fatal |= stopFatal;
    if (!timedOut) {
      if (services == Services.HUNG) {
        services = Services.IDLE; // the hung stop returned at last; nothing waits for it any more
        return;
      }
      if (services != Services.STOPPING) {
        return;
      }
      services = Services.IDLE;
    }
    boolean clean = stopClean && !unreportedUnclean && !timedOut;
    unreportedUnclean = false;
    if (phase instanceof Phase.Leading leading && relinquishAfterStop) {
      relinquishAfterStop = false;
      boolean release = clean && !fatal;
      if (!release) {
        emit(new Command.Log(Level.ERROR, "After the failed start, " + (fatal ? "a VirtualMachineError was thrown"
            : timedOut ? "a service did not stop within " + config.stopTimeout() : "a service failed to stop")
            + ": giving up the term without releasing Lease " + config.lease()
            + "; another replica takes over once it expires"));
      }
      // What the loss reaction then hears: a stop that threw or hung after the failed start is unclean.
      unreportedUnclean = !clean;
      emit(new Command.Relinquish(leading.term(), release));
      return;
    }
    if (!(phase instanceof Phase.Stopping stopping)) {
      return;
    }
    String what = timedOut ? "Services did not stop within " + config.stopTimeout() : "A service failed to stop";
    switch (stopping.reason()) {
      case CLOSE -> {
        if (!clean && config.contends()) {
          emit(new Command.Log(Level.ERROR, what + "; leaving the Lease to expire instead of releasing it (Lease "
              + config.lease() + ")"));
        } else if (!clean) {
          emit(new Command.Log(Level.ERROR, what + " (" + config.lease() + ")"));
        }
        finish(StopCause.CLOSED, Optional.empty(), clean
            || timedOut && config.flaw() == RunnerFlaw.RELEASE_AFTER_HUNG_STOP);
      }
      case LOSS -> afterLossStops(clean, timedOut);
      case START_FAILED -> {
        if (!clean) {
          emit(new Command.Log(Level.ERROR, what + " after a service failed to start (" + config.lease() + ")"));
        }
        emit(new Command.StartCompleted(stopping.failure()));
        stopped(StopCause.START_FAILED, stopping.failure());
      }
      case ELECTION_FAILED -> {
        if (!clean) {
          emit(new Command.Log(Level.ERROR, what + " after the election for Lease " + config.lease() + " failed"));
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
          emit(new Command.Log(Level.WARN, (timedOut ? "Services did not stop within " + config.stopTimeout()
              : "A service failed to stop") + " after the loss of Lease " + config.lease() + "; exiting anyway"));
        }
        emit(new Command.ElectorAfterLoss(false));
        electorDone = true;
        exit(StopCause.LOST, Optional.empty(), "Lost leadership of Lease");
      }
      case RECONTEND, CUSTOM -> {
        if (config.policy() == LossPolicy.Kind.CUSTOM && !timedOut && !fatal) {
          // The handler hears every loss whose stops returned; after one that threw it may not contend again.
          lossUnclean = !clean;
          phase = new Phase.HandlingLoss();
          emit(new Command.CallLossHandler(lastLostTerm));
        } else if (!clean) {
          emit(new Command.Log(Level.ERROR, (timedOut ? "A service did not stop within " + config.stopTimeout()
              : "A service did not stop cleanly") + " after the loss of Lease " + config.lease()
              + ": not contending again, since its work may still run; restart the process"));
          emit(new Command.ElectorAfterLoss(false));
          finish(StopCause.LOST, Optional.empty(), false);
        } else if (fatal) {
          emit(new Command.Log(Level.ERROR, "A service threw a VirtualMachineError: not contending again for Lease "
              + config.lease() + "; restart the process"));
          emit(new Command.ElectorAfterLoss(false));
          finish(StopCause.LOST, Optional.empty(), false);
        } else {
          phase = new Phase.Contending();
          emit(new Command.ElectorAfterLoss(true));
        }
      }
    }
  }

  private void lossHandled(LossHandled handled) {
    if (!(phase instanceof Phase.HandlingLoss)) {
      return; // closed while the handler ran
    }
    if (handled.contendAgain() && lossUnclean) {
      emit(new Command.Log(Level.ERROR, "The loss handler asked to contend again, but a service did not stop "
          + "cleanly after the loss of Lease " + config.lease() + ": not contending again, since its work may "
          + "still run; restart the process"));
      emit(new Command.ElectorAfterLoss(false));
      finish(StopCause.LOST, Optional.empty(), false);
    } else if (handled.contendAgain()) {
      phase = new Phase.Contending();
      emit(new Command.ElectorAfterLoss(true));
    } else {
      emit(new Command.ElectorAfterLoss(false));
      finish(StopCause.LOST, Optional.empty(), false);
    }
  }

  private void exited() {
    if (phase instanceof Phase.Exiting exiting) {
      stopped(exiting.cause(), exiting.failure());
    }
  }

  private void electionFailed(Throwable cause) {
    Objects.requireNonNull(cause, "cause");
    electorDone = true;
    if (phase instanceof Phase.Stopped || phase instanceof Phase.Exiting) {
      return;
    }
    if (phase instanceof Phase.Finishing finishing) {
      stopped(finishing.cause(), finishing.failure()); // loop death during close: nothing is left to finish
      return;
    }
    if (closeRequested) {
      if (!(phase instanceof Phase.Stopping)) {
        stopped(StopCause.CLOSED, Optional.empty());
      }
      return; // the close's stop is in flight; it finishes with the elector already gone
    }
    emit(new Command.Log(Level.ERROR, "The election for Lease " + config.lease() + " failed; not contending any more: " + cause));
    if (term != null) {
      // Elected or not: the services stop next, and their term must not outlive the runner.
      emit(new Command.EndTerm(term));
      term = null;
    }
    if (published.kind() == ElectionState.Kind.LEADING) {
      emit(new Command.Publish(new ElectionState.Following(Optional.empty())));
    }
    Optional<Throwable> failure = Optional.of(cause);
    if (config.flaw() == RunnerFlaw.FAILURE_LEAVES_SERVICES) {
      stopOrExit(StopCause.ELECTION_FAILED, failure, "Election failed for Lease");
    } else if (services == Services.STARTING || services == Services.RUNNING) {
      stopServices();
      phase = new Phase.Stopping(StopReason.ELECTION_FAILED, failure);
    } else if (services == Services.STOPPING) {
      phase = new Phase.Stopping(StopReason.ELECTION_FAILED, failure);
    } else {
      stopOrExit(StopCause.ELECTION_FAILED, failure, "Election failed for Lease");
    }
  }

  // ---- helpers ---------------------------------------------------------------------------------------------

  private void stopServices() {
    services = Services.STOPPING;
    stopNumber++;
    emit(new Command.StopServices(stopNumber));
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
    phase = new Phase.Exiting(cause, failure);
    emit(new Command.Exit(why));
  }

  /** Ends the elector (releasing when {@code release}), then stops with {@code cause}. */
  private void finish(StopCause cause, Optional<Throwable> failure, boolean release) {
    phase = new Phase.Finishing(cause, failure);
    if (electorDone || !config.contends()) {
      stopped(cause, failure);
      return;
    }
    emit(new Command.FinishElector(release && !fatal));
  }

  private void stopped(StopCause cause, Optional<Throwable> failure) {
    phase = new Phase.Stopped(cause);
    term = null;
    emit(new Command.ReportStopped(cause, failure));
  }

  private void emit(Command command) {
    if (command instanceof Command.Publish publish) {
      published = publish.state();
    }
    out.add(command);
  }

  @Override
  public String toString() {
    return "RunnerLifecycle{" + phase + ", services " + services + (closeRequested ? ", closing" : "") + "}";
  }
}
