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
 * and the Lease transport's short tasks: handing an asynchronous request to the HTTP client (its interceptors may
 * refresh a token, which must not hold the loop), opening a follower's watch, the RBAC preflight. The Lease
 * requests and Event writes themselves wait on no thread: they are bounded by a count in flight
 * ({@link #leaseRequests()}, {@link #eventWrites()}).
 *
 * <p>The pool starts a thread only when none of its threads is idle (a task is handed to an idle worker, else a
 * new one starts) and retires a worker idle for {@value #KEEP_ALIVE_SECONDS} s, so a process holds as many
 * workers as tasks ran at once lately: one election that renews every retry period and tells a listener keeps
 * one worker, since the renewal's call and the listener's callback take turns on it. It has no bound for user
 * code, so a {@code stop()} that hangs holds one worker and never the others' callbacks. The transport's tasks are
 * bounded apart ({@link #io()}), {@value #IO_MAX_CALLS} at once: tasks that hang (a watch that opens against a
 * server that does not answer) take workers of their own instead of queueing a healthy runner's renewal behind
 * them, and a task refused past that bound fails at once, as a failed call, which the elector retries. A worker is
 * named {@code election-io-<n>} while it runs such a task and after the runner while it runs that runner's
 * callback (see {@link CallbackLane}).
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
  private static final ExecutorService EVENTS = new BoundedCalls(WORKERS, EVENTS_MAX_CALLS);

  // Asynchronous requests hold no thread while they wait, so their bound is a count, not a pool.
  private static final InFlight LEASE_REQUESTS = new InFlight(IO_MAX_CALLS, "Lease requests");
  private static final InFlight EVENT_WRITES = new InFlight(EVENTS_MAX_CALLS, "leadership Event writes");

  private SharedPools() {}

  /**
   * The JVM's asynchronous Lease requests in flight, at most {@value #IO_MAX_CALLS}: a server that never answers
   * holds each for its request timeout, and one more is refused at once, as a failed call.
   */
  static InFlight leaseRequests() {
    return LEASE_REQUESTS;
  }

  /** The JVM's asynchronous leadership Event writes in flight, at most {@value #EVENTS_MAX_CALLS}. */
  static InFlight eventWrites() {
    return EVENT_WRITES;
  }

  /** Runs user code; never the Lease loop's work. */
  static ExecutorService userCode() {
    return WORKERS;
  }

  /** Runs the Lease transport's tasks, at most {@value #IO_MAX_CALLS} at once, on the same workers. */
  static ExecutorService io() {
    return IO;
  }

  /**
   * Writes the leadership Events, at most {@value #EVENTS_MAX_CALLS} at once, on the same workers but apart
   * from the bound of the Lease calls: one more is refused (and the Event dropped).
   */
  static ExecutorService events() {
    return EVENTS;
  }

  private static java.util.concurrent.ThreadFactory daemon(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return task -> {
      Thread t = new Thread(task, prefix + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * A count of requests in flight with a bound: {@link #tryAcquire()} takes a place or says none is left, never
   * waiting; each place taken is given back once with {@link #release()}. Thread-safe.
   */
  static final class InFlight {
    private final int limit;
    private final String what;
    private final AtomicInteger inFlight = new AtomicInteger();

    InFlight(int limit, String what) {
      this.limit = limit;
      this.what = what;
    }

    /** Takes a place, or returns false at once when {@code limit} are taken. */
    boolean tryAcquire() {
      if (inFlight.incrementAndGet() > limit) {
        inFlight.decrementAndGet();
        return false;
      }
      return true;
    }

    void release() {
      inFlight.decrementAndGet();
    }

    /** Places taken now. */
    int inFlight() {
      return inFlight.get();
    }

    /** Why one more is refused, for the failure's message. */
    String refusal() {
      return limit + " " + what + " are in flight in this JVM already";
    }
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
          }
        });
      } catch (RejectedExecutionException | Error e) {
        inFlight.decrementAndGet();
        throw e;
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
