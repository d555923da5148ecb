package io.github.electionpolicy.fabric8;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One runner's user code, one call at a time and in the order submitted, on a shared {@link Executor}: the
 * services' starts and stops (and the loss handler after them) on one lane, the listeners on another, so a slow
 * listener never delays a stop. While a task runs, its thread is named for the lane and the runner
 * ({@code election-services[lease:identity]}), so a thread dump shows whose code it is, and
 * {@link #runningOnThisLane()} tells a callback's re-entrant call (a service that closes its runner).
 *
 * <p>Thread-safe.
 */
final class CallbackLane {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  /** The lane whose task the current thread runs, if any. */
  private static final ThreadLocal<CallbackLane> CURRENT = new ThreadLocal<>();

  private final Executor executor;
  private final String threadName;
  private final Object owner;
  private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
  private boolean running;
  private boolean refused;
  private Throwable lastRefusal;
  // Whether a hand-over again is scheduled on a RetryTimer (see submitRetrying).
  private boolean retrying;

  /** Runs a task on the runner's loop after a delay: how a lane the executor refused is handed over again. */
  interface RetryTimer {
    void after(long delayNanos, Runnable task);
  }

  static final long RETRY_FIRST_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  static final long RETRY_MAX_NANOS = TimeUnit.SECONDS.toNanos(1);

  /**
   * @param owner what the lane's callbacks belong to (the runner), for {@link #currentOwner()}
   */
  CallbackLane(Executor executor, String threadName, Object owner) {
    this.executor = executor;
    this.threadName = threadName;
    this.owner = owner;
  }

  /** The owner of the lane whose callback the current thread runs, or null outside every lane. */
  static Object currentOwner() {
    CallbackLane lane = CURRENT.get();
    return lane == null ? null : lane.owner;
  }

  boolean runningOnThisLane() {
    return CURRENT.get() == this;
  }

  /**
   * Queues {@code task}; whatever it throws is logged (callers catch what they must act on). Returns false when
   * the executor refused to run the lane (a {@link RejectedExecutionException}, or an {@link Error} such as
   * "unable to create native thread"): the task stays queued, in order, with whatever is submitted after it,
   * and runs once {@link #retry()} succeeds. A refused stop must not be dropped: the services would run on.
   */
  boolean submit(Runnable task) {
    synchronized (this) {
      queue.add(task);
      if (running) {
        return !refused;
      }
      running = true;
    }
    return startDrain();
  }

  /**
   * Queues {@code task} as {@link #submit} does and, if the executor refuses the lane, hands it over again on {@code
   * timer}, 10 ms later first, then twice as late each time up to every second, until a thread takes it: nothing
   * queued is lost, a refused stop included (until then it counts as a stop that has not returned). One such retry is
   * scheduled at a time, whoever submits. Returns false when this call began the retries (the caller's cue to say so,
   * once), true otherwise.
   */
  boolean submitRetrying(Runnable task, RetryTimer timer) {
    return submit(task) || !scheduleRetry(timer, RETRY_FIRST_NANOS);
  }

  // True when it scheduled a retry; false when one was scheduled already.
  private boolean scheduleRetry(RetryTimer timer, long delayNanos) {
    synchronized (this) {
      if (retrying) {
        return false;
      }
      retrying = true;
    }
    timer.after(delayNanos, () -> {
      synchronized (this) {
        retrying = false;
      }
      if (!retry()) {
        scheduleRetry(timer, Math.min(2 * delayNanos, RETRY_MAX_NANOS));
      }
    });
    return true;
  }

  /** Hands the queued tasks to the executor again after a refusal; true once they run (or none waited). */
  boolean retry() {
    synchronized (this) {
      if (!refused) {
        return true;
      }
      refused = false;
    }
    return startDrain();
  }

  /** Whether the executor refused to run the lane and tasks wait for {@link #retry()}. */
  synchronized boolean refused() {
    return refused;
  }

  private boolean startDrain() {
    try {
      executor.execute(new Run());
      return true;
    } catch (RejectedExecutionException | Error e) {
      // The lane stays busy with its tasks queued: awaitIdle waits for them, as for any task not yet run.
      synchronized (this) {
        refused = true;
        lastRefusal = e;
      }
      return false;
    }
  }

  /** Why the executor last refused the lane, if it did. */
  synchronized Throwable lastRefusal() {
    return lastRefusal;
  }

  /** One run of the lane on the executor; the simulation's executor asks which lane it belongs to. */
  final class Run implements Runnable {
    CallbackLane lane() {
      return CallbackLane.this;
    }

    @Override
    public void run() {
      drain();
    }
  }

  private void drain() {
    Thread thread = Thread.currentThread();
    String name = thread.getName();
    CallbackLane outer = CURRENT.get();
    CURRENT.set(this);
    thread.setName(threadName);
    boolean idle = false;
    try {
      while (true) {
        Runnable task;
        synchronized (this) {
          task = queue.poll();
          if (task == null) {
            // The thread is the pool's again before anyone waiting sees the lane idle.
            restore(thread, name, outer);
            idle = true;
            running = false;
            notifyAll();
            return;
          }
        }
        try {
          task.run();
        } catch (Throwable e) {
          // Never throws: a line that fails must not strand the tasks queued behind this one.
          RunnerLog.errorSafely(LOG, "A callback of {} failed", threadName, e);
        }
      }
    } finally {
      if (!idle) {
        restore(thread, name, outer);
      }
    }
  }

  private static void restore(Thread thread, String name, CallbackLane outer) {
    thread.setName(name);
    if (outer == null) {
      CURRENT.remove();
    } else {
      CURRENT.set(outer);
    }
  }

  /** Whether a task runs or waits. */
  synchronized boolean busy() {
    return running;
  }

  /**
   * Waits until no task runs or waits, at most {@code timeoutNanos} ({@code Long.MAX_VALUE}: for ever); true
   * at once on the lane itself.
   */
  boolean awaitIdle(long timeoutNanos) throws InterruptedException {
    if (runningOnThisLane()) {
      return true;
    }
    long deadline = System.nanoTime() + timeoutNanos;
    synchronized (this) {
      while (running) {
        if (timeoutNanos == Long.MAX_VALUE) {
          wait();
        } else {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          TimeUnit.NANOSECONDS.timedWait(this, left);
        }
      }
      return true;
    }
  }
}
