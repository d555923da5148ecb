package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link ServiceSequence} on one thread of its own, one call at a time, so user code never runs
 * on (or holds up) the Lease loop, and a start can never overtake the stop submitted before it. The sequence
 * decides the order and what failures mean; this class only adds the thread, the waits and their timeouts.
 */
final class ServiceControl {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);
  private static final long POLL_MILLIS = 100;

  /** How a stop that a caller waited for ended. */
  enum StopResult {
    /** Every reconciler stopped and none threw, since the last stop reported. */
    CLEAN,
    /** Every stop returned, but one threw (here or in a stop since the last one reported). */
    FAILED,
    /** The stop did not finish within the wait: a reconciler may still run. */
    NOT_FINISHED;

    /** Whether the Lease may be released: only when every reconciler stopped without failing. */
    boolean clean() {
      return this == CLEAN;
    }
  }

  /** Gives up the term after a failed start; {@code release} only if every reconciler stopped cleanly. */
  @FunctionalInterface
  interface GiveUp {
    void giveUp(boolean release);
  }

  private final ServiceSequence sequence;
  private final ExecutorService thread;
  // Confined to the control thread. A stop failure not yet reported to a caller that decides about the
  // Lease: stops made while starting (the term ended mid-start) are reported by the next stop waited for.
  private boolean unreportedStopFailure;
  private volatile boolean started;
  private volatile boolean fatal;
  private volatile Thread controlThread;
  private volatile Future<?> timedOutStop;

  ServiceControl(List<LeaderService> reconcilers, String threadName) {
    this.sequence = new ServiceSequence(reconcilers);
    this.thread = Executors.newSingleThreadExecutor(task -> {
      Thread t = new Thread(task, threadName);
      t.setDaemon(true);
      controlThread = t;
      return t;
    });
  }

  /** True on the reconciler thread, e.g. when a reconciler callback closes the runner. */
  boolean onControlThread() {
    return Thread.currentThread() == controlThread;
  }

  /**
   * Whether a reconciler threw a {@link VirtualMachineError}: the runner then keeps the Lease, contends no
   * more and calls no loss handler.
   */
  boolean hadFatalFailure() {
    return fatal;
  }

  /** Starts the reconcilers and waits until they started; a failure stops those started and is thrown. */
  void startNow(LeadershipTerm term) {
    Future<ServiceSequence.StartOutcome> outcome = thread.submit(() -> start(term));
    ServiceSequence.StartOutcome started;
    // Waits whatever interrupts come (and keeps them for the caller): giving up the wait would leave the start
    // running with no runner returned to stop it.
    boolean interrupted = false;
    try {
      while (true) {
        try {
          started = outcome.get();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } catch (ExecutionException e) {
      throw new IllegalStateException("starting the reconcilers failed: " + e.getCause(), e.getCause());
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    if (started.startFailure().isPresent()) {
      Throwable failure = started.startFailure().get().cause();
      throw new IllegalStateException("a reconciler failed to start: " + failure.getMessage(), failure);
    }
  }

  /**
   * Starts the reconcilers for {@code term} unless it ended first; if one fails, calls {@code giveUp} with
   * whether the others all stopped cleanly.
   */
  void startLater(LeadershipTerm term, GiveUp giveUp) {
    try {
      thread.execute(() -> {
        if (!term.isValid()) {
          return;
        }
        ServiceSequence.StartOutcome outcome = start(term);
        if (outcome.kind() == ServiceSequence.StartKind.FAILED) {
          boolean release = outcome.stop().clean() && !outcome.fatal();
          if (!release) {
            LOG.error("After the failed start, {}: giving up the term without releasing the Lease; another "
                + "replica takes over once it expires", outcome.fatal() ? "a VirtualMachineError was thrown"
                : "a reconciler failed to stop");
          }
          giveUp.giveUp(release);
        }
      });
    } catch (RejectedExecutionException closed) {
      LOG.debug("Not starting reconcilers: the runner is closed");
    }
  }

  // On the control thread.
  private ServiceSequence.StartOutcome start(LeadershipTerm term) {
    ServiceSequence.StartOutcome outcome = sequence.startAll(term);
    noteFailures(outcome);
    if (outcome.kind() == ServiceSequence.StartKind.TERM_ENDED && !outcome.stop().clean()) {
      // Whoever ended the term (close, a loss) waits for a stop next and must learn of this failure.
      unreportedStopFailure = true;
    }
    started = outcome.kind() == ServiceSequence.StartKind.STARTED;
    return outcome;
  }

  // On the control thread.
  private StopResult stop() {
    ServiceSequence.StopOutcome outcome = sequence.stopAll();
    noteFailures(outcome);
    started = false;
    boolean failed = unreportedStopFailure || !outcome.clean();
    unreportedStopFailure = false;
    return failed ? StopResult.FAILED : StopResult.CLEAN;
  }

  private void noteFailures(ServiceSequence.Outcome outcome) {
    if (outcome.fatal()) {
      fatal = true;
    }
  }

  /**
   * Stops the reconcilers and waits at most {@code timeout}, without being cut short by an interrupt (one
   * that arrives is kept for the caller). Never call it on the control thread: the stop is queued behind the
   * task running there. If an earlier stop already timed out and still hangs, returns
   * {@link StopResult#NOT_FINISHED} at once: a stop queued behind a hung one cannot finish sooner, and a
   * shutdown hook's close() after an EXIT must not wait a second stop timeout.
   */
  StopResult stopAndWait(Duration timeout) {
    Future<?> hung = timedOutStop;
    if (hung != null && !hung.isDone()) {
      return StopResult.NOT_FINISHED;
    }
    Future<StopResult> stop = submitStop();
    if (stop == null) {
      return StopResult.CLEAN;
    }
    long deadline = System.nanoTime() + Durations.cappedNanos(timeout);
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return stop.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (TimeoutException e) {
          timedOutStop = stop;
          return StopResult.NOT_FINISHED;
        } catch (ExecutionException e) {
          LOG.error("Stopping the reconcilers failed", e.getCause());
          return StopResult.FAILED;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Stops the reconcilers and waits until they stopped, or until {@code abandon} turns true or the caller is
   * interrupted ({@link StopResult#NOT_FINISHED}).
   */
  StopResult stopAndWaitUntilStoppedOr(BooleanSupplier abandon) {
    Future<StopResult> stop = submitStop();
    if (stop == null) {
      return StopResult.CLEAN;
    }
    while (true) {
      try {
        return stop.get(POLL_MILLIS, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        if (abandon.getAsBoolean()) {
          return StopResult.NOT_FINISHED;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return StopResult.NOT_FINISHED;
      } catch (ExecutionException e) {
        LOG.error("Stopping the reconcilers failed", e.getCause());
        return StopResult.FAILED;
      }
    }
  }

  private Future<StopResult> submitStop() {
    try {
      return thread.submit(this::stop);
    } catch (RejectedExecutionException closed) {
      return null;
    }
  }

  boolean started() {
    return started;
  }

  /** Lets queued calls finish, then ends the thread. */
  void shutdown() {
    thread.shutdown();
  }

  /**
   * Waits until the thread ended after {@link #shutdown()}; true at once on the control thread itself, and
   * when a stop that timed out still hangs there: the runner cannot end a stop() that will not return.
   */
  boolean awaitTermination(long timeoutNanos) throws InterruptedException {
    if (onControlThread()) {
      return true;
    }
    Future<?> hung = timedOutStop;
    if (hung != null && !hung.isDone()) {
      LOG.warn("Not waiting for the reconciler thread: a stop() that outlived its timeout still runs there");
      return true;
    }
    return thread.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
  }
}
