package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ElectionState.StopCause;
import io.github.electionpolicy.fabric8.RunnerLifecycle.Command;
import io.github.electionpolicy.fabric8.RunnerLifecycle.Input;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns one runner's state on its {@link RunnerLoop}: feeds {@link RunnerLifecycle} its inputs, one at a time,
 * and carries out the commands it returns: services and the loss handler on one {@link CallbackLane}, listeners
 * on another, the exiter on a third, Lease calls through the {@link LeaseElector} and its
 * {@link LeaseTransport}. Inputs that arrive while commands run wait in a queue, so no step re-enters another.
 * After each batch it publishes one immutable {@link RunnerView} for readers on other threads.
 *
 * <p>Whatever the election logic throws on the loop (the elector, the lifecycle, a command) ends the runner as
 * {@link StopCause#ELECTION_FAILED}: the term ends, the services stop, and an {@code EXIT} policy exits. An
 * {@link Error} is treated the same way; the loop itself survives it.
 *
 * <p>Thread-safe where it says so ({@link #view()}, {@link #requestClose()}, {@link #awaitStopped}); every
 * other method runs on the loop.
 */
final class LifecycleDriver {

  private static final long HAND_OVER_RETRY_FIRST_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(10);
  private static final long HAND_OVER_RETRY_MAX_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  /** What the driver is built from. */
  record Parts(String identity, String lease, LeaseSettings settings, Optional<LeadershipTerm> unelectedTerm,
      List<LeaderService> services, List<ElectionListener> listeners, RunnerLoop loop, Executor userCode,
      Optional<LeaseTransport> transport, boolean preflight, Ticker ticker, Clock clock, String threadTag,
      LeaseProtocol.Flaw flaw, RunnerFlaw runnerFlaw) {}

  private final String identity;
  private final String lease;
  private final LeaseSettings settings;
  private final LossPolicy policy;
  private final Duration stopTimeout;
  private final Optional<LeadershipTerm> unelectedTerm;
  private final List<ElectionListener> listeners;
  private final RunnerLoop loop;
  private final Optional<LeaseTransport> transport;
  private final RunnerLifecycle lifecycle;
  private final LeaseElector elector;
  private final ServiceSequence sequence;
  private final CallbackLane servicesLane;
  private final CallbackLane listenersLane;
  private final CallbackLane exitLane;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final CompletableFuture<Optional<Throwable>> startCompleted = new CompletableFuture<>();
  private final RunnerFlaw flaw;

  // Confined to the loop.
  private final ArrayDeque<Input> inputs = new ArrayDeque<>();
  private boolean draining;
  // Lanes whose hand-over the pool refused and the loop retries (see handOver); on the loop only.
  private final java.util.Set<CallbackLane> handOversRetrying =
      java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
  private boolean failing;
  private boolean reportedStopped;
  private ElectionState state;
  private RunnerLoop.Timer stopTimer;
  private LeaseTransport.Call preflightCall;
  private boolean exited;
  private boolean closeTaken;

  private volatile RunnerView view;
  // Set once the exiter returned: awaitStopped() then also waits for its lane to be done.
  private volatile boolean exiterReturned;
  // Set once, by the first close() of any thread: one compare-and-set, so that two closers cannot both take it.
  private final AtomicBoolean closeRequested = new AtomicBoolean();

  LifecycleDriver(Parts parts) {
    this.identity = parts.identity();
    this.lease = parts.lease();
    this.settings = parts.settings();
    this.policy = settings == null ? LossPolicy.exit() : settings.lossPolicy();
    this.stopTimeout = settings == null ? LeaseSettings.DEFAULT_RENEW_DEADLINE : settings.stopTimeout();
    this.unelectedTerm = parts.unelectedTerm();
    this.flaw = parts.runnerFlaw();
    this.listeners = List.copyOf(parts.listeners());
    this.loop = parts.loop();
    this.transport = parts.transport();
    boolean contends = transport.isPresent();
    this.lifecycle = new RunnerLifecycle(new RunnerLifecycle.Config(contends, parts.preflight(), policy.kind(), lease,
        Durations.format(stopTimeout), parts.runnerFlaw()));
    this.elector = contends ? new LeaseElector(transport.get(), lease, identity, settings, new ElectorEvents(),
        parts.ticker(), parts.clock(), parts.flaw(), parts.runnerFlaw()) : null;
    this.sequence = new ServiceSequence(parts.services(), parts.runnerFlaw());
    this.servicesLane = new CallbackLane(parts.userCode(), "election-services[" + parts.threadTag() + "]", this);
    this.listenersLane = new CallbackLane(parts.userCode(), "election-listeners[" + parts.threadTag() + "]", this);
    this.exitLane = new CallbackLane(parts.userCode(), "election-exit[" + parts.threadTag() + "]", this);
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
    onLoop(() -> feed(new RunnerLifecycle.Start(unelectedTerm)));
    return startCompleted;
  }

  /**
   * Asks the runner to close. The current term ends at once, on the caller's thread, so that a service
   * started after the caller's own callback sees it ended; the rest happens on the loop.
   */
  void requestClose() {
    if (flaw == RunnerFlaw.CLOSED_FLAG_SET_AFTER_HANDOFF) {
      // The deliberate race: checked, handed to the loop, and only then set.
      if (closeRequested.get()) {
        return;
      }
      handOffClose();
      closeRequested.set(true);
      return;
    }
    if (closeRequested.compareAndSet(false, true)) {
      handOffClose();
    }
  }

  private void handOffClose() {
    ElectionState current = view.state();
    if (current instanceof ElectionState.Leading leading) {
      leading.term().end();
    }
    unelectedTerm.ifPresent(LeadershipTerm::end);
    onLoop(() -> feed(new RunnerLifecycle.CloseRequested()));
  }

  boolean closeRequested() {
    return closeRequested.get();
  }

  boolean hasStopped() {
    return stopped.getCount() == 0;
  }

  /** Whether the caller runs one of this runner's callbacks (a service, listener, loss handler or exiter). */
  boolean inCallback() {
    return CallbackLane.currentOwner() == this;
  }

  /** Waits until {@code STOPPED} was reported; at most {@code timeoutNanos}. */
  boolean awaitStoppedReported(long timeoutNanos) throws InterruptedException {
    if (timeoutNanos == Long.MAX_VALUE) {
      stopped.await();
      return true;
    }
    return stopped.await(timeoutNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  /**
   * Waits until the callbacks queued before {@code STOPPED} ran (the listeners heard it), except a service's
   * {@code stop()} that outlived the stop timeout: the runner cannot end a stop that does not return.
   */
  boolean awaitCallbacks(long deadlineNanos, boolean forever) throws InterruptedException {
    // Read once STOPPED was reported, when a hung stop can only return, never start hanging.
    if (!view.servicesHung()) {
      long left = forever ? Long.MAX_VALUE : Math.max(0, deadlineNanos - System.nanoTime());
      if (!servicesLane.awaitIdle(left)) {
        return false;
      }
    }
    long left = forever ? Long.MAX_VALUE : Math.max(0, deadlineNanos - System.nanoTime());
    if (exiterReturned && !exitLane.awaitIdle(left)) {
      return false;
    }
    left = forever ? Long.MAX_VALUE : Math.max(0, deadlineNanos - System.nanoTime());
    return listenersLane.awaitIdle(left);
  }

  // ---- the loop --------------------------------------------------------------------------------------------

  private void onLoop(Runnable task) {
    loop.execute(() -> guarded(task));
  }

  private RunnerLoop.Timer onLoopAfter(long delayNanos, Runnable task) {
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

  private void feed(Input input) {
    inputs.add(input);
  }

  private void drain() {
    if (draining) {
      return;
    }
    draining = true;
    try {
      Input input;
      while ((input = inputs.poll()) != null) {
        if (!(input instanceof RunnerLifecycle.Start)) {
          takeCloseFirst();
        }
        for (Command command : lifecycle.step(input)) {
          execute(command);
        }
      }
    } finally {
      draining = false;
    }
    publishView();
  }

  /**
   * close() was called before this input arrived, though its own task may still wait behind this one: the
   * lifecycle hears of the close first, so that no failure or loss queued before that task is taken as one
   * that came before the close (and applies the loss policy to a closed runner). A close twice is a no-op.
   */
  private void takeCloseFirst() {
    if (closeRequested.get() && !closeTaken) {
      closeTaken = true;
      for (Command command : lifecycle.step(new RunnerLifecycle.CloseRequested())) {
        execute(command);
      }
    }
  }

  private void failed(Throwable failure) {
    draining = false;
    inputs.clear();
    if (failing || reportedStopped) {
      LOG.error("The election logic of {} failed while it stopped", identity, failure);
      emergencyStop(failure);
      return;
    }
    failing = true;
    try {
      if (elector != null) {
        elector.fail(failure);
      }
      feed(new RunnerLifecycle.ElectionFailed(failure));
      drain();
    } catch (Throwable again) {
      again.addSuppressed(failure);
      LOG.error("The election logic of {} failed again while it handled a failure", identity, again);
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
    if (state instanceof ElectionState.Leading leading) {
      leading.term().end();
    }
    unelectedTerm.ifPresent(LeadershipTerm::end);
    handOver(servicesLane, sequence::stopAll);
    reportStopped(StopCause.ELECTION_FAILED, Optional.of(failure));
    publishView();
  }

  /**
   * Hands {@code task} to {@code lane}. If the pool refuses (no thread can be started), the lane keeps the task
   * queued in order, and the loop hands it over again, sooner first, then every second, until it runs: a refused
   * stop is never dropped, so a close or a loss stops the services as soon as a thread can be had, and until then
   * the stop counts as one that has not returned (its deadline applies, the Lease is not released).
   */
  private void handOver(CallbackLane lane, Runnable task) {
    if (!lane.submit(task)) {
      retryHandOver(lane, HAND_OVER_RETRY_FIRST_NANOS);
    }
  }

  private void retryHandOver(CallbackLane lane, long delayNanos) {
    if (!handOversRetrying.add(lane)) {
      return; // a retry is scheduled already
    }
    if (delayNanos == HAND_OVER_RETRY_FIRST_NANOS) {
      LOG.warn("Could not hand the callbacks of {} to a thread ({}); retrying until one can be had", identity,
          String.valueOf(lane.lastRefusal()));
    }
    onLoopAfter(delayNanos, () -> {
      handOversRetrying.remove(lane);
      if (!lane.retry()) {
        retryHandOver(lane, Math.min(2 * delayNanos, HAND_OVER_RETRY_MAX_NANOS));
      }
    });
  }

  private void publishView() {
    RunnerLifecycle.Services services = lifecycle.services();
    view = new RunnerView(state, services == RunnerLifecycle.Services.RUNNING,
        services == RunnerLifecycle.Services.HUNG && flaw != RunnerFlaw.HUNG_STOP_LOOKS_LIVE,
        elector == null ? Optional.empty() : elector.lastSuccessNanos(),
        elector == null ? 0 : elector.contactWindowNanos());
  }

  private void execute(Command command) {
    if (command instanceof Command.Publish publish) {
      publish(publish.state());
    } else if (command instanceof Command.StartServices start) {
      startServices(start.term());
    } else if (command instanceof Command.StopServices stop) {
      stopServices(stop.stop());
    } else if (command instanceof Command.EndTerm end) {
      end.term().end();
    } else if (command instanceof Command.RunPreflight) {
      preflightCall = transport.orElseThrow().preflight(
          denied -> onLoop(() -> feed(new RunnerLifecycle.PreflightDone(denied))),
          failure -> onLoop(() -> {
            LOG.error("The RBAC preflight for Lease {} failed; not contending", lease, failure);
            feed(new RunnerLifecycle.ElectionFailed(failure));
          }));
    } else if (command instanceof Command.StartElector) {
      elector.start();
    } else if (command instanceof Command.CloseElector) {
      elector.close();
    } else if (command instanceof Command.FinishElector finish) {
      elector.finish(finish.release());
    } else if (command instanceof Command.Relinquish relinquish) {
      elector.relinquish(relinquish.term(), relinquish.release());
    } else if (command instanceof Command.ElectorAfterLoss after) {
      elector.afterLoss(after.contendAgain());
    } else if (command instanceof Command.CallLossHandler call) {
      callLossHandler(call.term());
    } else if (command instanceof Command.Exit exit) {
      exit(exit.why());
    } else if (command instanceof Command.StartCompleted completed) {
      publishView(); // the caller of start() reads health() as soon as it returns
      startCompleted.complete(completed.failure());
    } else if (command instanceof Command.Log line) {
      log(line);
    } else if (command instanceof Command.ReportStopped report) {
      reportStopped(report.cause(), report.failure());
    } else {
      throw new IllegalStateException("unknown command " + command);
    }
  }

  private void publish(ElectionState next) {
    ElectionState previous = state;
    if (previous.equals(next) || previous.kind() == ElectionState.Kind.STOPPED) {
      return;
    }
    state = next;
    // Readers see the new state before any command after this one hands work to another thread (a service's
    // start() must find its runner LEADING).
    publishView();
    if (next instanceof ElectionState.Following following && following.leader().isPresent()) {
      LOG.info("Following leader {}", following.leader().get());
    }
    dispatch(listener -> listener.stateChanged(previous, next));
    if (next instanceof ElectionState.Following following) {
      dispatch(listener -> listener.following(following.leader()));
    }
  }

  private void dispatch(Consumer<ElectionListener> call) {
    if (listeners.isEmpty()) {
      return;
    }
    if (flaw == RunnerFlaw.LISTENER_FAILURE_ENDS_DISPATCH) {
      handOver(listenersLane, () -> listeners.forEach(call));
      return;
    }
    handOver(listenersLane, () -> {
      for (ElectionListener listener : listeners) {
        try {
          call.accept(listener);
        } catch (Throwable e) {
          // Listeners only observe: whatever one throws, an Error included (a NoClassDefFoundError from a
          // library missing at run time), the listeners after it still hear the event and the election goes on.
          LOG.warn("Election listener {} failed", listener, e);
        }
      }
    });
  }

  private void startServices(LeadershipTerm term) {
    handOver(servicesLane, () -> {
      ServiceSequence.StartOutcome outcome = sequence.startAll(term);
      Optional<Throwable> failure = outcome.startFailure().map(ServiceSequence.Failure::cause);
      onLoop(() -> feed(new RunnerLifecycle.ServicesStarted(outcome.kind(), outcome.fatal(), failure)));
    });
  }

  private void stopServices(int number) {
    // The deadline first: if the pool refuses the stop (see handOver), the lifecycle, which already counts the
    // stop as in flight, still hears StopDeadline while the hand-over is retried.
    if (stopTimer != null) {
      stopTimer.cancel();
    }
    stopTimer = onLoopAfter(Durations.cappedNanos(stopTimeout), () -> feed(new RunnerLifecycle.StopDeadline(number)));
    handOver(servicesLane, () -> {
      ServiceSequence.StopOutcome outcome = sequence.stopAll();
      onLoop(() -> feed(new RunnerLifecycle.ServicesStopped(outcome.clean(), outcome.fatal())));
    });
  }

  private void callLossHandler(LeadershipTerm term) {
    LossHandler handler = ((LossPolicy.Custom) policy).handler();
    handOver(servicesLane, () -> {
      LossHandler.AfterLoss next;
      try {
        next = Objects.requireNonNull(handler.onLoss(term), "LossHandler returned null");
      } catch (Throwable e) {
        LOG.error("Loss handler failed; stopping contention for Lease {}", lease, e);
        next = flaw == RunnerFlaw.HANDLER_FAILURE_RECONTENDS ? LossHandler.AfterLoss.RECONTEND
            : LossHandler.AfterLoss.STOP;
      }
      boolean again = next == LossHandler.AfterLoss.RECONTEND;
      onLoop(() -> feed(new RunnerLifecycle.LossHandled(again)));
    });
  }

  private void exit(String why) {
    if (exited) {
      onLoop(() -> feed(new RunnerLifecycle.Exited()));
      return;
    }
    exited = true;
    LOG.error("{} {}; exiting with status {} (loss policy EXIT)", why, lease, LossPolicy.LOSS_EXIT_STATUS);
    Exiter exiter = ((LossPolicy.Exit) policy).exiter();
    // On a lane of its own: System.exit() may never return (it runs the shutdown hook that closes this runner),
    // and nothing waits for this lane.
    handOver(exitLane, () -> {
      try {
        exiter.exit(LossPolicy.LOSS_EXIT_STATUS);
      } catch (Throwable e) {
        LOG.error("Exiter failed", e);
      }
      exiterReturned = true;
      onLoop(() -> feed(new RunnerLifecycle.Exited()));
    });
  }

  private void log(Command.Log line) {
    switch (line.level()) {
      case INFO -> LOG.info("{}", line.message());
      case WARN -> LOG.warn("{}", line.message());
      case ERROR -> LOG.error("{}", line.message());
    }
  }

  private void reportStopped(StopCause cause, Optional<Throwable> failure) {
    if (reportedStopped) {
      return;
    }
    reportedStopped = true;
    if (stopTimer != null) {
      stopTimer.cancel();
      stopTimer = null;
    }
    if (preflightCall != null) {
      preflightCall.cancel();
    }
    if (elector != null && !elector.finished()) {
      elector.abandon();
    }
    transport.ifPresent(LeaseTransport::close);
    publish(new ElectionState.Stopped(cause, failure));
    // A start that never completed (the runner failed or closed during an unelected start) must not leave its
    // caller waiting.
    startCompleted.complete(failure);
    publishView();
    stopped.countDown();
    LOG.info("Stopped {} ({})", identity, cause);
  }

  /** Test hook: ends the runner as a killed process ends, as far as other replicas can tell; on the loop. */
  void crash() {
    reportedStopped = true;
    if (stopTimer != null) {
      stopTimer.cancel();
    }
    if (preflightCall != null) {
      preflightCall.cancel();
    }
    if (elector != null) {
      elector.abandon();
    }
    transport.ifPresent(LeaseTransport::close);
    stopped.countDown();
  }

  /** Runs {@code task} on the loop and waits for it; for tests. */
  void onLoopAndWait(Runnable task) {
    CountDownLatch done = new CountDownLatch(1);
    loop.execute(() -> {
      try {
        task.run();
      } finally {
        done.countDown();
      }
    });
    boolean interrupted = false;
    while (true) {
      try {
        done.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Connects the elector to the lifecycle; on the loop. */
  private final class ElectorEvents implements LeaseElector.Events {
    @Override
    public void following(Optional<String> holder) {
      feed(new RunnerLifecycle.Followed(holder));
    }

    @Override
    public void elected(LeadershipTerm term) {
      feed(new RunnerLifecycle.Elected(term));
    }

    @Override
    public void lost(LeadershipTerm term) {
      feed(new RunnerLifecycle.Lost(term));
    }

    @Override
    public void renewed(Duration roundTrip) {
      dispatch(listener -> listener.renewed(roundTrip));
    }

    @Override
    public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
      dispatch(listener -> listener.renewFailed(cause, sinceLastRenewal));
    }

    @Override
    public void finished() {
      feed(new RunnerLifecycle.ElectorFinished());
    }

    @Override
    public void stepped() {}

    @Override
    public void onLoop(Runnable task) {
      LifecycleDriver.this.onLoop(task);
    }

    @Override
    public RunnerLoop.Timer onLoopAfter(long delayNanos, Runnable task) {
      return LifecycleDriver.this.onLoopAfter(delayNanos, task);
    }
  }

  @Override
  public String toString() {
    return "LifecycleDriver{" + identity + ", " + view.state() + "}";
  }
}
