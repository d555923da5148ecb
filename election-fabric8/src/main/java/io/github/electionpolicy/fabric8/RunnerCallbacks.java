package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Where one runner's user code runs, off its loop: the services' starts and stops and the loss handler on one
 * {@link CallbackLane}, the listeners on another (a slow listener never delays a stop), the exiter on a third, and
 * the runner's log lines on its {@link RunnerLog.Lane}. Each callback reports back to the loop as a
 * {@link RunnerLifecycleInput}, through {@code report}; and the callers of {@code close()} and
 * {@code awaitStopped()} wait here for what was queued before {@code STOPPED}.
 *
 * <p>Thread-safe: the hand-overs run on the loop, the waits on any thread.
 */
final class RunnerCallbacks {

  /**
   * How long the exiter waits for the log lines before it (the loss that exits among them) to be written: the
   * exit ends the JVM, and with it the daemon threads that write them; an appender stuck longer than this
   * must not keep a process that decided to exit alive.
   */
  static final long EXIT_LOG_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);

  private final List<ElectionListener> listeners;
  // The listeners that override renewed(Duration): the only ones a renewal is handed over for. Found at the first
  // renewal (on the loop), so the reflection that tells them is off the first election's path.
  private List<ElectionListener> renewalListeners;
  private final ServiceSequence sequence;
  private final Consumer<RunnerLifecycleInput> report;
  private final long stopTimeoutNanos;
  private final String lease;
  private final CallbackLane servicesLane;
  private final CallbackLane listenersLane;
  private final CallbackLane exitLane;
  private final RunnerLog.Lane logLane;
  private final RunnerLog log;
  private final RunnerFlaw flaw;
  private final CallbackLane.RetryTimer loopTimer;
  // Set once the exiter returned: awaitStopped() then also waits for its lane to be done.
  private volatile boolean exiterReturned;

  /**
   * @param owner the runner the lanes' callbacks belong to, for {@link CallbackLane#currentOwner()}
   * @param report hands an input to the runner's loop, from any thread
   * @param loopTimer retries a refused hand-over on the loop
   */
  RunnerCallbacks(Object owner, Executor userCode, String threadTag, List<ElectionListener> listeners,
      ServiceSequence sequence, RunnerLog.Lane logLane, Duration stopTimeout, String lease,
      Consumer<RunnerLifecycleInput> report, RunnerFlaw flaw, CallbackLane.RetryTimer loopTimer) {
    this.flaw = flaw;
    this.loopTimer = loopTimer;
    this.listeners = List.copyOf(listeners);
    this.sequence = sequence;
    this.report = report;
    this.stopTimeoutNanos = Durations.cappedNanos(stopTimeout);
    this.lease = lease;
    this.servicesLane = new CallbackLane(userCode, "election-services[" + threadTag + "]", owner);
    this.listenersLane = new CallbackLane(userCode, "election-listeners[" + threadTag + "]", owner);
    this.exitLane = new CallbackLane(userCode, "election-exit[" + threadTag + "]", owner);
    this.logLane = logLane;
    this.log = new RunnerLog(ElectionRunner.class, logLane);
  }

  /**
   * Whether {@code listener} does anything with {@link ElectionListener#renewed}: its class overrides it (or it
   * cannot be told). A renewal comes every retry period; one that no listener hears is handed to no thread.
   */
  static boolean hearsRenewals(ElectionListener listener) {
    try {
      return listener.getClass().getMethod("renewed", Duration.class).getDeclaringClass() != ElectionListener.class;
    } catch (NoSuchMethodException | RuntimeException e) {
      return true;
    }
  }

  /** Tells the listeners that hear renewals ({@link #hearsRenewals}), in order, on their lane. On the loop. */
  void dispatchRenewal(Duration roundTrip) {
    if (renewalListeners == null) {
      renewalListeners = listeners.stream().filter(RunnerCallbacks::hearsRenewals).toList();
    }
    dispatch(renewalListeners, listener -> listener.renewed(roundTrip));
  }

  /** Tells every listener, in order, on the listeners' lane. */
  void dispatch(Consumer<ElectionListener> call) {
    dispatch(listeners, call);
  }

  private void dispatch(List<ElectionListener> listeners, Consumer<ElectionListener> call) {
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
          log.warn("Election listener {} failed", listener, e);
        }
      }
    });
  }

  void startServices(LeadershipTerm term) {
    handOver(servicesLane, () -> {
      ServiceSequence.StartOutcome outcome = sequence.startAll(term);
      Optional<Throwable> failure = outcome.startFailure().map(ServiceSequence.Failure::cause);
      report.accept(new RunnerLifecycleInput.ServicesStarted(outcome.kind(), outcome.fatal(), failure));
    });
  }

  void stopServices() {
    handOver(servicesLane, () -> {
      ServiceSequence.StopOutcome outcome = sequence.stopAll();
      report.accept(new RunnerLifecycleInput.ServicesStopped(outcome.clean(), outcome.fatal()));
    });
  }

  /** Stops the services without reporting back: the runner's logic cannot go on. */
  void stopServicesUnreported() {
    handOver(servicesLane, sequence::stopAll);
  }

  void callLossHandler(LossHandler handler, LeadershipTerm term) {
    handOver(servicesLane, () -> {
      LossHandler.AfterLoss next;
      try {
        next = Objects.requireNonNull(handler.onLoss(term), "LossHandler returned null");
      } catch (Throwable e) {
        log.error("Loss handler failed; stopping contention for Lease {}", lease, e);
        next = flaw == RunnerFlaw.HANDLER_FAILURE_RECONTENDS ? LossHandler.AfterLoss.RECONTEND
            : LossHandler.AfterLoss.STOP;
      }
      report.accept(new RunnerLifecycleInput.LossHandled(next == LossHandler.AfterLoss.RECONTEND));
    });
  }

  /**
   * Calls the exiter on a lane of its own: System.exit() may never return (it runs the shutdown hook that closes
   * this runner), and nothing waits for this lane until the exiter returned.
   */
  void exit(Exiter exiter) {
    handOver(exitLane, () -> {
      try {
        // The lines before it (the loss, the exit's own ERROR) are not lost with the JVM.
        logLane.awaitWritten(EXIT_LOG_WAIT_NANOS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      try {
        exiter.exit(LossPolicy.LOSS_EXIT_STATUS);
      } catch (Throwable e) {
        log.error("Exiter failed", e);
        if (flaw == RunnerFlaw.EXITER_FAILURE_UNREPORTED) {
          return;
        }
      }
      exiterReturned = true;
      report.accept(new RunnerLifecycleInput.Exited());
    });
  }

  /**
   * Hands {@code task} to {@code lane}, on the loop. If the pool refuses (no thread can be started), the lane keeps
   * the task queued in order, and the loop hands it over again, sooner first, then every second, until it runs:
   * a refused stop is never dropped, so a close or a loss stops the services as soon as a thread can be had, and
   * until then the stop counts as one that has not returned (its deadline applies, the Lease is not released).
   */
  private void handOver(CallbackLane lane, Runnable task) {
    if (!lane.submitRetrying(task, loopTimer)) {
      log.warn("Could not hand the callbacks of {} to a thread ({}); retrying until one can be had", lease,
          String.valueOf(lane.lastRefusal()));
    }
  }

  /**
   * Waits until the callbacks queued before {@code STOPPED} ran (the listeners heard it) and the log lines were
   * written, except a service's {@code stop()} that outlived the stop timeout ({@code servicesHung}, read once
   * STOPPED was reported, when a hung stop can only return): the runner cannot end a stop that does not return.
   */
  boolean awaitCallbacks(long deadlineNanos, boolean forever, boolean servicesHung) throws InterruptedException {
    if (!servicesHung && !servicesLane.awaitIdle(left(deadlineNanos, forever))) {
      return false;
    }
    if (exiterReturned && !exitLane.awaitIdle(left(deadlineNanos, forever))) {
      return false;
    }
    return listenersLane.awaitIdle(left(deadlineNanos, forever)) && awaitLogWritten(left(deadlineNanos, forever));
  }

  private static long left(long deadlineNanos, boolean forever) {
    return forever ? Long.MAX_VALUE : Math.max(0, deadlineNanos - System.nanoTime());
  }

  /**
   * Waits until the log lines handed over so far were written, at most {@code timeoutNanos} and never longer
   * than the stop timeout: an appender that is stuck delays a close or an {@code awaitStopped()} by no more.
   */
  boolean awaitLogWritten(long timeoutNanos) throws InterruptedException {
    return logLane.awaitWritten(Math.min(timeoutNanos, stopTimeoutNanos)) || timeoutNanos > stopTimeoutNanos;
  }
}
