package io.github.electionpolicy.fabric8;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads every runner of the JVM shares beside its {@link RunnerLoop}: one pool of workers, named
 * {@code election-worker-<n>} while idle, that runs both user code (services, listeners, loss handlers, exiters)
 * and the blocking Lease calls.
 *
 * <p>The pool starts a thread only when none of its threads is idle (a task is handed to an idle worker, else a
 * new one starts) and retires a worker idle for {@value #KEEP_ALIVE_SECONDS} s, so a process holds as many
 * workers as tasks ran at once lately: one election that renews every retry period and tells a listener keeps
 * one worker, since the renewal's call and the listener's callback take turns on it. It has no bound for user
 * code, so a {@code stop()} that hangs holds one worker and never the others' callbacks. Lease calls are bounded
 * apart, each by its request timeout, and all of them together by {@value #IO_MAX_CALLS} in flight at once: calls
 * that hang (runners cut off from their API server) take workers of their own instead of queueing a healthy
 * runner's renewal behind them, and a call refused past that bound fails at once, as a failed call, which the
 * elector retries; so does one the pool cannot start a thread for (its {@link Error} reaches the caller as a
 * {@link RejectedExecutionException}). A worker is named {@code election-io-<n>} while it makes a Lease call and after the runner
 * while it runs that runner's callback (see {@link CallbackLane}).
 */
final class SharedPools {

  static final int IO_MAX_CALLS = 64;
  /** Leadership Event writes in flight at once in the JVM, bounded apart from the Lease calls. */
  static final int EVENTS_MAX_CALLS = 16;
  static final long KEEP_ALIVE_SECONDS = 10;
  private static final String WORKER = "election-worker-";

  // No core threads: below its core size a ThreadPoolExecutor starts a new thread for every task even while
  // others idle (one election's first calls used to start eight). With none, the SynchronousQueue hands a task to
  // an idle worker if one polls, and a new worker starts only when none does.
  private static final ExecutorService WORKERS = new ThreadPoolExecutor(0, Integer.MAX_VALUE, KEEP_ALIVE_SECONDS,
      TimeUnit.SECONDS, new SynchronousQueue<>(), daemon(WORKER));

  private static final ExecutorService IO = new BoundedCalls(WORKERS, IO_MAX_CALLS);

  // Best-effort writes never take the Lease calls' slots: Event writes that hang (an events endpoint that does
  // not answer, in every runner of the JVM) would otherwise get a healthy runner's renewal refused.
  private static final BoundedCalls EVENTS = new BoundedCalls(WORKERS, EVENTS_MAX_CALLS);

  private SharedPools() {}

  /** Runs user code; never the Lease loop's work. */
  static ExecutorService userCode() {
    return WORKERS;
  }

  /** Runs blocking Lease calls, at most {@value #IO_MAX_CALLS} at once, on the same workers. */
  static ExecutorService io() {
    return IO;
  }

  /**
   * Writes the leadership Events, at most {@value #EVENTS_MAX_CALLS} at once, on the same workers but apart
   * from the bound of the Lease calls: one more is refused (and the Event dropped).
   */
  static BoundedCalls events() {
    return EVENTS;
  }

  private static java.util.concurrent.ThreadFactory daemon(String prefix) {
    return threadFactory(prefix);
  }

  /**
   * Daemon threads named {@code prefix<n>} that take nothing from the thread that happens to start them (which
   * varies: the loop, a runner's caller of {@code start()}, a worker): no inheritable thread-locals, and the
   * library's class loader as their context class loader, so that every runner's callbacks see the same context
   * and no caller's loader or request-scoped value is kept alive by a thread every runner shares.
   */
  static java.util.concurrent.ThreadFactory threadFactory(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return task -> {
      Thread t = new Thread(null, task, prefix + count.incrementAndGet(), 0, false);
      t.setDaemon(true);
      t.setContextClassLoader(SharedPools.class.getClassLoader());
      return t;
    };
  }

  /**
   * Lease calls on the shared workers, at most {@code limit} in flight at once; one more is rejected at once.
   * {@code submit} and a future's {@code cancel(true)} work as on any pool (the call's worker is interrupted
   * while it runs that call only). Shared by every runner, so it is never shut down: those methods refuse.
   */
  static final class BoundedCalls extends AbstractExecutorService {
    private final ExecutorService workers;
    private final int limit;
    private final AtomicInteger inFlight = new AtomicInteger();

    BoundedCalls(ExecutorService workers, int limit) {
      this.workers = workers;
      this.limit = limit;
    }

    @Override
    public void execute(Runnable call) {
      execute(call, null);
    }

    /**
     * As {@link #execute(Runnable)}, then runs {@code then} (if not null) on the same worker once the call's slot
     * is free again: a call that hands the next one over there (a runner's next Event) leaves it the slot it held,
     * instead of holding two at the hand-over and getting the next one refused when the others are in use.
     * {@code then} does not run if the call is refused.
     */
    void execute(Runnable call, Runnable then) {
      if (inFlight.incrementAndGet() > limit) {
        inFlight.decrementAndGet();
        throw new RejectedExecutionException(limit + " Lease calls are in flight in this JVM already");
      }
      try {
        workers.execute(() -> {
          Thread thread = Thread.currentThread();
          String name = thread.getName();
          thread.setName(name.startsWith(WORKER) ? "election-io-" + name.substring(WORKER.length()) : name);
          try {
            call.run();
          } finally {
            thread.setName(name);
            inFlight.decrementAndGet();
            if (then != null) {
              then.run();
            }
          }
        });
      } catch (RejectedExecutionException e) {
        inFlight.decrementAndGet();
        throw e;
      } catch (Error e) {
        // The pool could not start a thread ("unable to create native thread"): refused like a call past the
        // bound, a failed call the elector retries (as a callback lane keeps a hand-over for a retry), never an
        // Error out of the caller's step on the loop, which would fail the election.
        inFlight.decrementAndGet();
        throw new RejectedExecutionException("no thread could be started for the call: " + e, e);
      }
    }

    /** Calls in flight now. */
    int inFlight() {
      return inFlight.get();
    }

    @Override
    public void shutdown() {
      throw new UnsupportedOperationException("the shared I/O pool is never shut down");
    }

    @Override
    public List<Runnable> shutdownNow() {
      throw new UnsupportedOperationException("the shared I/O pool is never shut down");
    }

    @Override
    public boolean isShutdown() {
      return false;
    }

    @Override
    public boolean isTerminated() {
      return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return false;
    }
  }
}
