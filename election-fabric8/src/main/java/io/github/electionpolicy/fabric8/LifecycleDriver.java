package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ElectionState.StopCause;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Owns one runner's state on its {@link RunnerLoop}: feeds {@link RunnerLifecycle} its inputs, one at a time,
 * and has {@link LifecycleCommands} carry out the commands it returns: user code (services, the loss handler,
 * listeners, the exiter) off the loop through {@link RunnerCallbacks}, Lease calls through the
 * {@link LeaseElector} and its {@link LeaseTransport}; what the elector signals comes back through
 * {@link ElectorEvents}. Inputs that arrive while commands run wait in a queue, so no step re-enters another.
 * After each batch it publishes one immutable {@link RunnerView} for readers on other threads. It writes no log
 * line on the loop, which every runner of the JVM shares: its lines and the elector's go through one
 * {@link RunnerLog.Lane}, written on the callback pool in order.
 *
 * <p>Whatever the election logic throws on the loop (the elector, the lifecycle, a command) ends the runner as
 * {@link StopCause#ELECTION_FAILED}: the term ends, the services stop, and an {@code EXIT} policy exits. An
 * {@link Error} is treated the same way; the loop itself survives it.
 *
 * <p>Thread-safe where it says so ({@link #view()}, {@link #requestClose()}, {@link #awaitStopped}); every
 * other method runs on the loop.
 */
final class LifecycleDriver {

  /** What the driver is built from. */
  record Parts(String identity, String lease, LeaseSettings settings, Optional<LeadershipTerm> unelectedTerm,
      List<LeaderService> services, List<ElectionListener> listeners, RunnerLoop loop, Executor userCode,
      Optional<LeaseTransport> transport, boolean preflight, Ticker ticker, Clock clock, String threadTag,
      LeaseProtocol.Flaw flaw, RunnerFlaw runnerFlaw, boolean deleteAfterRelease) {}

  private final String identity;
  private final String lease;
  private final LeaseSettings settings;
  private final LossPolicy policy;
  private final Duration stopTimeout;
  private final Optional<LeadershipTerm> unelectedTerm;
  private final RunnerLoop loop;
  private final Optional<LeaseTransport> transport;
  private final RunnerLifecycle lifecycle;
  private final LeaseElector elector;
  private final RunnerCallbacks callbacks;
  private final LifecycleCommands commands;
  private final RunnerLog.Lane logLane;
  private final RunnerLog log;
  private final StopLatch stopped = new StopLatch();
  private final CompletableFuture<Optional<Throwable>> startCompleted = new CompletableFuture<>();
  private final RunnerFlaw flaw;

  // Confined to the loop.
  private final ArrayDeque<RunnerLifecycleInput> inputs = new ArrayDeque<>();
  private boolean draining;
  private boolean failing;
  private boolean reportedStopped;
  // The emergency stop ended the runner without its lifecycle, whose state is then unknown: it takes no input more.
  private boolean lifecycleAbandoned;
  private ElectionState state;
  // Told of every published state on the loop, after the view (a sharded runner's driver); set before start.
  private Consumer<ElectionState> loopObserver;
  private Consumer<java.time.Duration> renewalObserver;
  private Runnable accessObserver;
  private Runnable answerObserver;

  private volatile RunnerView view;
  // Read and moved by close() on any thread; moved on the loop by the owner's close and the takes: by compare-and-set
  // only, so that two closers cannot both hand the close over and no move overwrites a close() meanwhile (RunnerClose).
  private final AtomicReference<RunnerClose> close = new AtomicReference<>(RunnerClose.OPEN);

  LifecycleDriver(Parts parts) {
    this.identity = parts.identity();
    this.lease = parts.lease();
    this.settings = parts.settings();
    this.policy = settings == null ? LossPolicy.exit() : settings.lossPolicy();
    this.stopTimeout = settings == null ? LeaseSettings.DEFAULT_RENEW_DEADLINE : settings.stopTimeout();
    this.unelectedTerm = parts.unelectedTerm();
    this.flaw = parts.runnerFlaw();
    this.loop = parts.loop();
    this.transport = parts.transport();
    boolean contends = transport.isPresent();
    this.logLane = new RunnerLog.Lane(loop, loop.logWriter(), parts.threadTag());
    this.log = new RunnerLog(ElectionRunner.class, logLane);
    this.lifecycle = new RunnerLifecycle(new RunnerLifecycleConfig(contends, parts.preflight(), policy.kind(), lease,
        Durations.format(stopTimeout), parts.runnerFlaw()));
    this.elector = contends ? new LeaseElector(transport.get(), lease, identity, settings, new ElectorEvents(this),
        parts.ticker(), parts.clock(), parts.flaw(), parts.runnerFlaw(), logLane, parts.deleteAfterRelease()) : null;
    this.callbacks = new RunnerCallbacks(this, parts.userCode(), parts.threadTag(), parts.listeners(),
        new ServiceSequence(parts.services(), parts.runnerFlaw(), log), logLane, stopTimeout, lease,
        input -> onLoop(() -> feed(input)), parts.runnerFlaw(), this::onLoopAfter);
    this.commands = new LifecycleCommands(this, callbacks, elector, transport, policy, lease, stopTimeout, log,
        startCompleted);
    this.state = contends ? new ElectionState.Starting() : new ElectionState.NotContending(identity);
    this.view = new RunnerView(state, false, false, Optional.empty(),
        contends ? settings.renewDeadline().toNanos() : 0);
  }

  // ---- from any thread -------------------------------------------------------------------------------------

  RunnerView view() {
    return view;
  }

  /** Starts on the loop; running unelected, the returned future completes once the services started. */
  CompletableFuture<Optional<Throwable>> start() {
    onLoop(() -> feed(new RunnerLifecycleInput.Start(unelectedTerm)));
    return startCompleted;
  }

  /**
   * Asks the runner to close. The current term ends at once, on the caller's thread, so that a service
   * started after the caller's own callback sees it ended; the rest happens on the loop.
   */
  void requestClose() {
    if (flaw == RunnerFlaw.CLOSED_FLAG_SET_AFTER_HANDOFF) {
      // The deliberate race: checked, handed to the loop, and only then set.
      if (close.get().userAsked()) {
        return;
      }
      handOffClose(new RunnerLifecycleInput.CloseRequested());
      close.updateAndGet(RunnerClose::userAsks);
      return;
    }
    if (!close.getAndUpdate(RunnerClose::userAsks).userAsked()) {
      handOffClose(new RunnerLifecycleInput.CloseRequested());
    }
  }

  /**
   * Asks the runner to close for its owner ({@code yieldToLoss}: a sharded replica's coordinator), not its user: a loss
   * being handled is answered by the loss policy, not by this close ({@link RunnerLifecycleInput.OwnerCloseRequested}).
   * Without {@code yieldToLoss}, or after the user's close, it is {@link #requestClose()}. A term held ends at once.
   */
  void requestClose(boolean yieldToLoss) {
    if (!yieldToLoss) {
      requestClose();
    } else if (!close.getAndUpdate(RunnerClose::ownerAsks).userAsked()) {
      handOffClose(new RunnerLifecycleInput.OwnerCloseRequested());
    }
  }

  /** The user's close after the owner's ({@link #requestClose(boolean)}): it answers a loss being handled, as any. */
  void closeIfOwnerClosed() {
    if (close.get().ownerAsked()) {
      requestClose();
    }
  }

  private void handOffClose(RunnerLifecycleInput input) {
    ElectionState current = view.state();
    if (current instanceof ElectionState.Leading leading) {
      leading.term().end();
    }
    unelectedTerm.ifPresent(LeadershipTerm::end);
    onLoop(() -> feed(input));
  }

  boolean closeRequested() {
    return close.get().userAsked();
  }

  boolean hasStopped() {
    return stopped.released();
  }

  /** Whether the caller runs one of this runner's callbacks (a service, listener, loss handler or exiter). */
  boolean inCallback() {
    return CallbackLane.currentOwner() == this;
  }

  /** Waits until {@code STOPPED} was reported; at most {@code timeoutNanos} ({@link StopLatch#await}). */
  boolean awaitStoppedReported(long timeoutNanos) throws InterruptedException {
    return stopped.await(timeoutNanos); // Long.MAX_VALUE: for ever (StopLatch)
  }

  /**
   * Waits until the callbacks queued before {@code STOPPED} ran and the log lines were written; see
   * {@link RunnerCallbacks#awaitCallbacks}.
   */
  boolean awaitCallbacks(long deadlineNanos, boolean forever) throws InterruptedException {
    return callbacks.awaitCallbacks(deadlineNanos, forever, view.servicesHung());
  }

  /**
   * For {@code close()}: waits until {@code STOPPED} was reported and the log lines until then were written,
   * whatever interrupts come, and keeps them for the caller.
   */
  void awaitClosedUninterruptibly() {
    boolean interrupted = false;
    boolean reported = false;
    while (true) {
      try {
        if (!reported) {
          awaitStoppedReported(Long.MAX_VALUE);
          reported = true;
        }
        callbacks.awaitLogWritten(Long.MAX_VALUE);
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** The runner's log lane: held while start() writes its lines (see RunnerAssembly.begin). */
  RunnerLog.Lane logLane() {
    return logLane;
  }

  /**
   * Has {@code observer} told of every state this runner publishes, on the loop, right after the view that shows it
   * and before the listeners hear it; the observer must only hand the state on (to a task of its own on the loop),
   * since what it throws fails this runner. Called once, before {@link #start()}.
   */
  void observeOnLoop(Consumer<ElectionState> observer) {
    if (loopObserver != null) {
      throw new IllegalStateException("observed already");
    }
    this.loopObserver = java.util.Objects.requireNonNull(observer, "observer");
  }

  /**
   * Before {@link #start()}, on the loop: hands the elector to {@code what} to tell it what this process already saw
   * of the Lease ({@link LeaseElector#seen}, its protocol's hand-over rules); a no-op for a runner that does not contend.
   */
  void beforeStart(Consumer<LeaseElector> what) {
    if (elector != null) {
      what.accept(elector);
    }
  }

  /** On the loop: what another watch of this process saw of the Lease, taken in as its own watch's change would be. */
  void sighted(LeaseRecord record, long arrivedNanos, boolean writable) {
    if (elector != null) {
      // As a task of this runner's: what the elector signals on it is taken in at the task's end.
      onLoop(() -> elector.sighted(record, arrivedNanos, writable));
    }
  }

  /** On the loop: the protocol of this runner's elector, if it contends ({@link LeaseElector#protocol}). */
  java.util.Optional<LeaseProtocol> protocol() {
    return java.util.Optional.ofNullable(elector).map(LeaseElector::protocol);
  }

  /** On the loop: a leader sends its next renewal at once (it carries a sharded member's leaving mark). */
  void renewSoon() {
    if (elector != null) {
      onLoop(elector::renewSoon); // a task of this runner's, as sighted's
    }
  }

  // ---- the loop --------------------------------------------------------------------------------------------

  /** Runs {@code task} on the loop as this runner's task (see guarded); from any thread. */
  void onLoop(Runnable task) {
    loop.execute(() -> guarded(task));
  }

  /** Runs {@code task} on the loop after {@code delayNanos} as this runner's task; from any thread. */
  RunnerLoop.Timer onLoopAfter(long delayNanos, Runnable task) {
    return loop.schedule(delayNanos, () -> guarded(task));
  }

  /** Every task of this runner on the loop: a failure of the election logic ends the runner, never the loop. */
  private void guarded(Runnable task) {
    try {
      task.run();
      drain();
    } catch (Throwable failure) {
      failed(failure);
    }
  }

  /** Queues {@code input} for the lifecycle; taken in once the current task returns. On the loop. */
  void feed(RunnerLifecycleInput input) {
    inputs.add(input);
  }

  private void drain() {
    if (draining) {
      return;
    }
    if (lifecycleAbandoned) {
      // A close() after the emergency stop would have it stop the services again and arm a deadline, after STOPPED.
      inputs.clear();
      return;
    }
    draining = true;
    try {
      RunnerLifecycleInput input;
      while ((input = inputs.poll()) != null) {
        if (!(input instanceof RunnerLifecycleInput.Start)) {
          takeCloseFirst(input);
        }
        for (RunnerLifecycleCommand command : lifecycle.step(input)) {
          commands.execute(command);
        }
      }
    } finally {
      draining = false;
    }
    publishView();
  }

  /**
   * close() (or the owner's close, not ahead of a loss queued from here on: it yields to the policy) was called before
   * this input arrived, its task maybe still behind: the lifecycle hears of it first, so that no failure, loss or take
   * queued before that task is taken as one that came before the close (a loss policy applied, services started).
   */
  private void takeCloseFirst(RunnerLifecycleInput input) {
    RunnerClose asked;
    Optional<RunnerLifecycleInput> first;
    do { // again if a close() moved it meanwhile (off the loop): the user's close is then the one taken in
      asked = close.get();
      first = asked.aheadOf(RunnerClose.lossAmong(input, inputs));
      if (first.isEmpty()) {
        return;
      }
    } while (!close.compareAndSet(asked, asked.taken()));
    for (RunnerLifecycleCommand command : lifecycle.step(first.get())) {
      commands.execute(command);
    }
  }

  private void failed(Throwable failure) {
    draining = false;
    inputs.clear();
    if (failing || reportedStopped) {
      log.error("The election logic of {} failed while it stopped", identity, failure);
      emergencyStop(failure);
      return;
    }
    failing = true;
    try {
      if (elector != null) {
        elector.fail(failure);
      }
      feed(new RunnerLifecycleInput.ElectionFailed(failure));
      drain();
    } catch (Throwable again) {
      again.addSuppressed(failure);
      log.error("The election logic of {} failed again while it handled a failure", identity, again);
      emergencyStop(again);
    } finally {
      failing = false;
    }
  }

  /** The lifecycle itself cannot go on: end the term, stop the services without waiting, and report. */
  private void emergencyStop(Throwable failure) {
    if (reportedStopped) {
      return;
    }
    lifecycleAbandoned = true;
    if (state instanceof ElectionState.Leading leading) {
      leading.term().end();
    }
    unelectedTerm.ifPresent(LeadershipTerm::end);
    callbacks.stopServicesUnreported();
    reportStopped(StopCause.ELECTION_FAILED, Optional.of(failure));
    publishView();
  }

  /** Publishes one immutable view of the runner for readers on other threads. On the loop. */
  void publishView() {
    RunnerLifecycleServices services = lifecycle.services();
    view = new RunnerView(state, services == RunnerLifecycleServices.RUNNING,
        services == RunnerLifecycleServices.HUNG && flaw != RunnerFlaw.HUNG_STOP_LOOKS_LIVE,
        elector == null ? Optional.empty() : elector.lastSuccessNanos(),
        elector == null ? 0 : elector.contactWindowNanos());
  }

  /** Publishes {@code next} unless it is the current state or the runner stopped; tells the listeners. */
  void publish(ElectionState next) {
    ElectionState previous = state;
    // The kinds first: a record's first equals in a JVM links its ObjectMethods bootstrap, tens of milliseconds on
    // the first election's path (Starting to Leading) when compared for nothing.
    if (previous.kind() == ElectionState.Kind.STOPPED || previous.kind() == next.kind() && previous.equals(next)) {
      return;
    }
    state = next;
    // Readers see the new state before any command after this one hands work to another thread (a service's
    // start() must find its runner LEADING).
    publishView();
    if (loopObserver != null) {
      loopObserver.accept(next);
    }
    if (next instanceof ElectionState.Following following && following.leader().isPresent()) {
      log.info("Following leader {}", following.leader().get());
    }
    dispatch(listener -> listener.stateChanged(previous, next));
    if (next instanceof ElectionState.Following following) {
      dispatch(listener -> listener.following(following.leader()));
    }
  }

  /** Calls the listeners off the loop, in order. On the loop. */
  void dispatch(Consumer<ElectionListener> call) {
    callbacks.dispatch(call);
  }

  /** A renewal, for the listeners that hear renewals only (see {@link RunnerCallbacks#hearsRenewals}). */
  void dispatchRenewal(java.time.Duration roundTrip) {
    if (renewalObserver != null) {
      renewalObserver.accept(roundTrip);
    }
    callbacks.dispatchRenewal(roundTrip);
  }

  /**
   * Has {@code observer} told of every renewal on the loop, with its round trip (a sharded member waits for the one
   * that carries its leaving mark); it must only hand it on, as {@link #observeOnLoop}'s. Called once, before start.
   */
  void observeRenewalsOnLoop(Consumer<java.time.Duration> observer) {
    this.renewalObserver = java.util.Objects.requireNonNull(observer, "observer");
  }

  /**
   * Has {@code observer} told, on the loop, each time the API server answered one of the elector's requests
   * ({@link ElectorSignals#answered}); it runs inside the elector's step, so it must only hand it on, as {@link
   * #observeOnLoop}'s. Called once, before start.
   */
  void observeAnswersOnLoop(Runnable observer) {
    this.answerObserver = java.util.Objects.requireNonNull(observer, "observer");
  }

  /** The API server answered a request of the elector's. */
  void dispatchAnswered() {
    if (answerObserver != null) {
      answerObserver.run();
    }
  }

  /**
   * Has {@code observer} told, on the loop, once the runner may write its Lease: just before its elector starts, or,
   * with the RBAC preflight, just before the verdict lets its writes out (granted, or unknown); never if the preflight
   * denied it or the runner closed first. It runs inside this runner's command, so it must not block, and what it
   * throws fails this runner. Called once, before start.
   */
  void observeAccessOnLoop(Runnable observer) {
    this.accessObserver = java.util.Objects.requireNonNull(observer, "observer");
  }

  /** The elector's writes may go out (its start without the preflight, or the preflight's verdict let it). */
  void accessAllowed() {
    if (accessObserver != null) {
      accessObserver.run();
    }
  }

  /** Reports {@code STOPPED} once: ends the elector, closes the transport, lets the waiting callers go. */
  void reportStopped(StopCause cause, Optional<Throwable> failure) {
    if (reportedStopped) {
      return;
    }
    reportedStopped = true;
    commands.cancelCalls();
    if (elector != null && !elector.finished()) {
      elector.abandon();
    }
    transport.ifPresent(LeaseTransport::close);
    publish(new ElectionState.Stopped(cause, failure));
    // A start that never completed (the runner failed or closed during an unelected start) must not leave its
    // caller waiting.
    startCompleted.complete(failure);
    publishView();
    // Before the count-down: whoever close() or awaitStopped() lets go finds the line handed over.
    log.info("Stopped {} ({})", identity, cause);
    stopped.release();
  }

  /** Test hook: ends the runner as a killed process ends, as far as other replicas can tell; on the loop. */
  void crash() {
    reportedStopped = true;
    commands.cancelCalls();
    if (elector != null) {
      elector.abandon();
    }
    transport.ifPresent(LeaseTransport::close);
    stopped.release();
  }

  /** The loop this runner runs on; for tests ({@code RunnerHooks}). */
  RunnerLoop loopForTest() {
    return loop;
  }

  @Override
  public String toString() {
    return "LifecycleDriver{" + identity + ", " + view.state() + "}";
  }
}
