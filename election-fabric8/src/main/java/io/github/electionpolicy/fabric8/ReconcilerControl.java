package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.ArrayList;
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
 * Starts and stops the reconcilers on one thread of their own, one call at a time, so user code never runs
 * on (or holds up) the Lease loop, and a start can never overtake the stop submitted before it.
 */
final class ReconcilerControl {

  private static final Logger LOG = LoggerFactory.getLogger(ElectedReconcilers.class);
  private static final long POLL_MILLIS = 100;

  private final List<Reconciler> reconcilers;
  private final ExecutorService thread;
  // Confined to the control thread.
  private final List<Reconciler> running = new ArrayList<>();
  private volatile boolean started;
  private volatile Thread controlThread;
  private volatile Future<?> timedOutStop;

  ReconcilerControl(List<Reconciler> reconcilers) {
    this.reconcilers = reconcilers;
    this.thread = Executors.newSingleThreadExecutor(task -> {
      Thread t = new Thread(task, "election-reconcilers");
      t.setDaemon(true);
      controlThread = t;
      return t;
    });
  }

  /** True on the reconciler thread, e.g. when a reconciler callback closes the runner. */
  boolean onControlThread() {
    return Thread.currentThread() == controlThread;
  }

  /** Starts the reconcilers and waits until they started; a failure stops those started and is thrown. */
  void startNow(LeadershipTerm term) {
    Future<Throwable> outcome = thread.submit(() -> startAll(term));
    Throwable failure;
    try {
      failure = outcome.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting reconcilers", e);
    } catch (ExecutionException e) {
      failure = e.getCause();
    }
    if (failure != null) {
      throw new IllegalStateException("a reconciler failed to start: " + failure.getMessage(), failure);
    }
  }

  /** Starts the reconcilers for {@code term} unless it ended first; runs {@code onFailure} if one fails. */
  void startLater(LeadershipTerm term, Runnable onFailure) {
    try {
      thread.execute(() -> {
        if (!term.isValid()) {
          return;
        }
        if (startAll(term) != null) {
          onFailure.run();
        }
      });
    } catch (RejectedExecutionException closed) {
      LOG.debug("Not starting reconcilers: the runner is closed");
    }
  }

  private Throwable startAll(LeadershipTerm term) {
    for (Reconciler reconciler : reconcilers) {
      if (!term.isValid()) {
        // The term ended while starting (e.g. a reconciler closed the runner, or the Lease was lost): the
        // reconcilers after it must not start under a term another replica may already have followed.
        break;
      }
      try {
        reconciler.start(term);
        running.add(reconciler);
      } catch (Exception | LinkageError e) {
        LOG.error("Reconciler {} failed to start; stopping the others and giving up the term", reconciler, e);
        stopAll();
        return e;
      }
    }
    if (!term.isValid()) {
      // Nothing started under an ended term may keep running.
      stopAll();
      return null;
    }
    started = true;
    LOG.info("Started {} reconciler(s) for {}", running.size(), term);
    return null;
  }

  private void stopAll() {
    if (running.isEmpty()) {
      return;
    }
    // A snapshot, cleared before the first stop(): a stop() that re-enters (say, by closing the runner)
    // finds nothing left to stop instead of stopping a reconciler twice.
    List<Reconciler> stopping = List.copyOf(running);
    running.clear();
    started = false;
    for (int i = stopping.size() - 1; i >= 0; i--) {
      Reconciler reconciler = stopping.get(i);
      try {
        reconciler.stop();
      } catch (Exception | LinkageError e) {
        LOG.error("Reconciler {} failed to stop cleanly", reconciler, e);
      }
    }
    LOG.info("Stopped {} reconciler(s)", stopping.size());
  }

  /**
   * Stops the reconcilers; true once they stopped within {@code timeout}. Never call it on the control
   * thread: the stop is queued behind the task running there. If an earlier stop already timed out and
   * still hangs, returns false at once: a stop queued behind a hung one cannot finish sooner, and a shutdown
   * hook's close() after an EXIT must not wait a second stop timeout.
   */
  boolean stopAndWait(Duration timeout) {
    Future<?> hung = timedOutStop;
    if (hung != null && !hung.isDone()) {
      return false;
    }
    Future<?> stop = submitStop();
    if (stop == null) {
      return true;
    }
    try {
      stop.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      timedOutStop = stop;
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException e) {
      return true;
    }
  }

  /** Stops the reconcilers and waits until they stopped (true) or {@code abandon} turns true (false). */
  boolean stopAndWaitUntilStoppedOr(BooleanSupplier abandon) {
    Future<?> stop = submitStop();
    if (stop == null) {
      return true;
    }
    while (true) {
      try {
        stop.get(POLL_MILLIS, TimeUnit.MILLISECONDS);
        return true;
      } catch (TimeoutException e) {
        if (abandon.getAsBoolean()) {
          return false;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      } catch (ExecutionException e) {
        return true;
      }
    }
  }

  private Future<?> submitStop() {
    try {
      return thread.submit(this::stopAll);
    } catch (RejectedExecutionException closed) {
      return null;
    }
  }

  boolean started() {
    return started;
  }

  void shutdown() {
    thread.shutdown();
  }
}
