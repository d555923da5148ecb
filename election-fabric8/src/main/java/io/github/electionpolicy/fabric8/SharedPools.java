package io.github.electionpolicy.fabric8;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads every runner of the JVM shares beside its {@link RunnerLoop}: one pool of workers, named
 * {@code election-worker-<n>} while idle, that runs both user code (services, listeners, loss handlers, exiters)
 * and the Lease transport's blocking tasks (the RBAC preflight's reviews; a follower's watch where fabric8 offers no
 * non-blocking open, see {@link LeaseWatch}); and at most {@value
 * #HAND_OVER_THREADS} threads that hand each asynchronous request to the HTTP client ({@link #handOver()}: its
 * interceptors may refresh a token, which must not hold the loop).
 * The Lease reads and writes, the watch openings and the Event writes themselves wait on no thread: they hold a
 * place in a count in flight ({@link #leaseRequests()}, {@link #eventWrites()}) until they are answered.
 *
 * <p>The pool starts a thread only when none of its threads is idle (a task is handed to an idle worker, else a
 * new one starts) and retires a worker idle for {@value #KEEP_ALIVE_SECONDS} s, so a process holds as many
 * workers as tasks ran at once lately. It has no bound for user code, so a {@code stop()} that hangs holds one
 * worker and never the others' callbacks. Lease calls are bounded apart: the asynchronous requests and the tasks
 * of {@link #io()} together, {@value #IO_MAX_CALLS} in flight at once in the JVM, so runners cut off from their
 * API server never have more than that many waiting on it and never queue a healthy runner's renewal behind
 * theirs; a call refused past that bound fails at once, as a failed call, which the elector retries; so does one
 * the pool cannot start a thread for (its {@link Error} reaches the caller as a {@link RejectedExecutionException}).
 * One runner's asynchronous requests, watch openings and tasks of {@link #io()} (its RBAC preflight and reviews)
 * hold {@value #ELECTION_MAX_CALLS} of those places at most ({@link InFlight#share}), so a runner whose calls never
 * end takes no other runner's.
 * A worker is named {@code election-io-<n>} while it runs a transport's task and after the runner while it runs that runner's
 * callback (see {@link CallbackLane}).
 */
final class SharedPools {

  static final int IO_MAX_CALLS = 64;
  /**
   * The places among the {@value #IO_MAX_CALLS} one runner's transport may hold at once: it needs one request and
   * one watch opening at a time, and a request it gave up keeps its place until its exchange ends. A runner whose
   * calls never end (its client's interceptor hangs) is refused its own next call past this, never the others'.
   */
  static final int ELECTION_MAX_CALLS = 8;
  /** Leadership Event writes in flight at once in the JVM, bounded apart from the Lease calls. */
  static final int EVENTS_MAX_CALLS = 16;
  static final long KEEP_ALIVE_SECONDS = 10;
  /** The most threads that hand requests to the HTTP client at once; more hand-overs wait for one. */
  static final int HAND_OVER_THREADS = 4;
  /**
   * How long the hand-over threads may all go without taking or finishing a task while hand-overs wait, before
   * those run on elastic workers instead.
   */
  static final long SPILL_MILLIS = 100;
  /**
   * The most workers that run user code at once before callbacks queue; a callback that waited {@value
   * #SPILL_MILLIS} ms for one runs on a worker of its own instead.
   */
  static final int USER_CODE_THREADS = 8;
  private static final String WORKER = "election-worker-";
  // One count for both pools' workers: each name is the JVM's once.
  private static final java.util.concurrent.ThreadFactory WORKER_THREADS = daemon(WORKER);

  // No core threads: below its core size a ThreadPoolExecutor starts a new thread for every task even while
  // others idle (one election's first calls used to start eight). With none, the SynchronousQueue hands a task to
  // an idle worker if one polls, and a new worker starts only when none does.
  private static final ExecutorService WORKERS = new ThreadPoolExecutor(0, Integer.MAX_VALUE, KEEP_ALIVE_SECONDS,
      TimeUnit.SECONDS, new SynchronousQueue<>(), WORKER_THREADS);

  // User code on at most USER_CODE_THREADS workers: at 1,000 elections a burst of losses (a saturated server)
  // handed hundreds of short stops and state changes over within a millisecond, and each that found no idle worker
  // started one, which the next burst kept alive. Past the bound they queue; one that waited SPILL_MILLIS runs on
  // WORKERS, so a stop() that hangs, or eight, never holds another runner's stop longer than that.
  private static final ThreadPoolExecutor USER_CODE = elastic(USER_CODE_THREADS, WORKER_THREADS, WORKERS,
      SharedLoop.INSTANCE, Ticker.SystemTicker.INSTANCE, false);

  // One bound for every Lease call of the JVM, whether it waits on a worker (a watch that opens, a preflight's
  // review) or on no thread (a read or write sent asynchronously): the server sees at most this many at once, as
  // before the requests went asynchronous.
  private static final InFlight LEASE_CALLS = new InFlight(IO_MAX_CALLS, "Lease calls");
  // Best-effort writes never take the Lease calls' places: Event writes that hang (an events endpoint that does
  // not answer, in every runner of the JVM) would otherwise get a healthy runner's renewal refused.
  private static final InFlight EVENT_WRITES = new InFlight(EVENTS_MAX_CALLS, "leadership Event writes");

  private static final ExecutorService IO = new BoundedCalls(WORKERS, LEASE_CALLS);

  // One writer while it keeps up; what waits behind a writer that took or finished nothing for SPILL_MILLIS (an
  // appender that hangs for one runner) spills to the workers, so one runner's hung appender holds only its own
  // lines. Each runner's lines stay in order wherever they run: a lane runs one run at a time.
  private static final java.util.concurrent.Executor LOG_WRITER = elastic(1, WORKER_THREADS, WORKERS,
      SharedLoop.INSTANCE, Ticker.SystemTicker.INSTANCE, true);

  // A request that holds its place in a bound already is handed to the HTTP client here: a short task that waits
  // for nothing, so a few threads of their own carry any rate; on the elastic workers a burst (a thousand leaders
  // renew in the same few milliseconds) started a worker per hand-over that found none idle, and kept them.
  private static final java.util.concurrent.Executor HAND_OVER =
      handOverTo(elastic(HAND_OVER_THREADS, "election-handover-"));

  private SharedPools() {}

  /**
   * The JVM's Lease calls in flight, at most {@value #IO_MAX_CALLS}: the asynchronous reads and writes (each
   * holds a place until its exchange ends, answered or timed out: a cancelled one is dropped, not aborted, and keeps
   * its place until then, unless its exchange had not started: still in the client's interceptors) and the tasks
   * of {@link #io()} together. One more is refused at once, as a failed call.
   */
  static InFlight leaseRequests() {
    return LEASE_CALLS;
  }

  /** The JVM's leadership Event writes in flight, at most {@value #EVENTS_MAX_CALLS}, apart from the Lease calls. */
  static InFlight eventWrites() {
    return EVENT_WRITES;
  }

  /**
   * Runs the short task that hands a request, which holds its place in a bound already, to the HTTP client: on
   * at most {@value #HAND_OVER_THREADS} threads of its own ({@code election-handover-<n>}), a new one only when
   * none is idle, the rest queued; never refused for a bound. An interceptor that blocks there (a token refresh, a
   * credential plugin that hangs) holds one of them; once none of them has taken or finished a task for {@value
   * #SPILL_MILLIS} ms while hand-overs wait, those run on elastic workers, so runners' hung interceptors cannot
   * hold up the requests of the others. Threads that are merely busy (a burst of renewals on a loaded machine)
   * keep taking tasks, and the queue waits for them: more threads would not add CPU.
   */
  static java.util.concurrent.Executor handOver() {
    return HAND_OVER;
  }

  /**
   * Runs user code, never the Lease loop's work: on at most {@value #USER_CODE_THREADS} workers at once, a new one
   * only when none is idle; past that a callback queues, and one that waited {@value #SPILL_MILLIS} ms runs on a
   * worker of its own (see {@link #elastic}). Never refused for a bound.
   */
  static ExecutorService userCode() {
    return USER_CODE;
  }

  /**
   * Writes the log lines every runner of the JVM hands off its loop ({@link RunnerLog.Lane}), one task at a time
   * and in the order handed over, on one worker at a time while it keeps up. An appender writes one line at a time anyway (a
   * console's stream is locked per line), so more writers only add threads that wait for that lock: at 1,000
   * elections a burst of warnings (renewals refused at a saturated server) kept a worker per runner that had
   * lines waiting. An appender that hangs holds this one worker; once it has taken or finished no runner's lines
   * for {@value #SPILL_MILLIS} ms, the lanes that wait run on the workers instead (see {@link #elastic}), so one
   * runner's hung appender holds its own lines only, each runner's lane keeping them, up to its bound, as before.
   * Refuses a lane only when no thread can be started for it, and the lane keeps its lines for a retry.
   */
  static java.util.concurrent.Executor logWriter() {
    return LOG_WRITER;
  }

  /** Runs the Lease transport's tasks, at most {@value #IO_MAX_CALLS} at once, on the same workers. */
  static ExecutorService io() {
    return IO;
  }

  /** The task, on a worker named {@code election-io-<n>} while it runs. */
  private static Runnable named(Runnable task) {
    return () -> {
      Thread thread = Thread.currentThread();
      String name = thread.getName();
      thread.setName(name.startsWith(WORKER) ? "election-io-" + name.substring(WORKER.length()) : name);
      try {
        task.run();
      } finally {
        thread.setName(name);
      }
    };
  }

  /**
   * A pool of at most {@code max} threads that starts one only when none is idle (as {@link #WORKERS} does) and,
   * once {@code max} are busy, queues the task instead of refusing it; a thread idle for {@value
   * #KEEP_ALIVE_SECONDS} s ends. So one election keeps one thread, and any burst at most {@code max}. The queue
   * hands a task only to an idle thread ({@code tryTransfer}), so the pool grows first; the rejection handler,
   * reached at {@code max}, queues it for the next thread that is done. A task is never left behind threads that do
   * not come back (an interceptor that hangs in each of them): once no thread of the pool has taken or finished a
   * task for {@value #SPILL_MILLIS} ms while tasks are queued, what is queued runs on the elastic {@link #WORKERS}
   * instead (checked on the shared loop's timer, every {@value #SPILL_MILLIS} ms while tasks are queued). Threads
   * that keep taking tasks are busy, not stuck: their queue waits for them.
   */
  static ThreadPoolExecutor elastic(int max, String prefix) {
    // The loop is looked up when a task is first queued, never while this class initializes: the shared loop's
    // class uses this one, and two threads initializing each one's first must not wait for each other.
    return elastic(max, prefix, WORKERS, SharedLoop.INSTANCE);
  }

  /** As {@link #elastic(int, String)}, spilling to {@code spill}, timed by the loop {@code timer} gives. */
  static ThreadPoolExecutor elastic(int max, String prefix, java.util.concurrent.Executor spill,
      java.util.function.Supplier<RunnerLoop> timer) {
    return elastic(max, prefix, spill, timer, Ticker.SystemTicker.INSTANCE);
  }

  /** As above, reading the time of the pool's progress from {@code ticker} (nanoseconds, as the loop's timer). */
  static ThreadPoolExecutor elastic(int max, String prefix, java.util.concurrent.Executor spill,
      java.util.function.Supplier<RunnerLoop> timer, java.util.function.LongSupplier ticker) {
    return elastic(max, daemon(prefix), spill, timer, ticker, true);
  }

  /**
   * As above, with threads from {@code threads}; with {@code whenStuck} false, what is queued spills at the first
   * check {@value #SPILL_MILLIS} ms after it was queued, whether the threads progress or not: a wait bounded in
   * time, for tasks (user code) whose delay counts against a deadline, at the cost of a thread more in a long
   * burst.
   */
  static ThreadPoolExecutor elastic(int max, java.util.concurrent.ThreadFactory threads,
      java.util.concurrent.Executor spill, java.util.function.Supplier<RunnerLoop> timer,
      java.util.function.LongSupplier ticker, boolean whenStuck) {
    HandOffQueue queue = new HandOffQueue();
    java.util.concurrent.atomic.AtomicLong progress = new java.util.concurrent.atomic.AtomicLong(ticker.getAsLong());
    Spill spilling = new Spill(queue, spill, timer, whenStuck ? progress : null, ticker);
    ThreadPoolExecutor pool = new ThreadPoolExecutor(0, max, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS, queue,
        threads, (task, executor) -> {
          if (executor.isShutdown()) {
            throw new RejectedExecutionException("the pool is shut down");
          }
          queue.queue(task);
          // Every thread may have ended between the refusal and the queueing: one is started for the task. If
          // none can be, the task is taken back before the caller hears it refused, so it never runs later.
          if (executor.getPoolSize() == 0) {
            try {
              executor.setCorePoolSize(1);
              executor.prestartCoreThread();
            } catch (RuntimeException | Error e) {
              if (queue.remove(task)) {
                throw e;
              }
              // A spill took it meanwhile: it runs there, so it is not refused (a refusal would be retried, and
              // run twice).
            } finally {
              executor.setCorePoolSize(0);
            }
          }
          spilling.due();
        }) {
      @Override
      protected void beforeExecute(Thread thread, Runnable task) {
        progress.set(ticker.getAsLong());
      }

      @Override
      protected void afterExecute(Runnable task, Throwable failure) {
        progress.set(ticker.getAsLong());
      }
    };
    return pool;
  }

  /**
   * Spills what waits in an elastic pool's queue to {@code spill} once the pool's threads have made no
   * {@code progress} (taken or finished a task) for {@value #SPILL_MILLIS} ms, checked on the loop's timer every
   * {@value #SPILL_MILLIS} ms while tasks wait (with no {@code progress} to go by: at the first check); a task it
   * could not spill (no thread) is put back and spilled again a period later.
   */
  private static final class Spill implements Runnable {
    private static final long SPILL_NANOS = TimeUnit.MILLISECONDS.toNanos(SPILL_MILLIS);
    private final HandOffQueue queue;
    private final java.util.concurrent.Executor spill;
    private final java.util.function.Supplier<RunnerLoop> timer;
    private final java.util.concurrent.atomic.AtomicLong progress;
    private final java.util.function.LongSupplier ticker;
    private final AtomicBoolean due = new AtomicBoolean();

    Spill(HandOffQueue queue, java.util.concurrent.Executor spill, java.util.function.Supplier<RunnerLoop> timer,
        java.util.concurrent.atomic.AtomicLong progress, java.util.function.LongSupplier ticker) {
      this.queue = queue;
      this.spill = spill;
      this.timer = timer;
      this.progress = progress;
      this.ticker = ticker;
    }

    /** A task was queued: a spill is scheduled unless one is already. */
    void due() {
      if (!due.compareAndSet(false, true)) {
        return;
      }
      try {
        timer.get().schedule(TimeUnit.MILLISECONDS.toNanos(SPILL_MILLIS), this);
      } catch (RuntimeException | Error e) {
        // No timer (the loop cannot start a thread): the queued task waits for the pool's own threads, and the
        // next task queued tries again.
        due.set(false);
      }
    }

    @Override
    public void run() {
      due.set(false);
      if (queue.isEmpty()) {
        return;
      }
      if (progress != null && ticker.getAsLong() - progress.get() < SPILL_NANOS) {
        // The threads are taking tasks: busy, not stuck. Look again a period later while tasks still wait.
        due();
        return;
      }
      java.util.List<Runnable> waiting = new java.util.ArrayList<>();
      queue.drainTo(waiting);
      boolean putBack = false;
      for (Runnable late : waiting) {
        try {
          spill.execute(late);
        } catch (RuntimeException | Error e) {
          queue.queue(late); // no thread to spill to: it waits for the pool's own, or the next spill
          putBack = true;
        }
      }
      if (putBack) {
        due();
      }
    }
  }

  /**
   * {@link RunnerLoop#shared()}, looked up at each call (never while this class initializes, see {@link
   * #elastic(int, String)}): a class of its own rather than a method reference at each of three places, each of
   * which was a class spun in a fresh JVM's first {@code start()} (issue 16).
   */
  private static final class SharedLoop implements java.util.function.Supplier<RunnerLoop> {
    static final SharedLoop INSTANCE = new SharedLoop();

    @Override
    public RunnerLoop get() {
      return RunnerLoop.shared();
    }
  }

  /** Offers a task only to a thread that waits for one; {@link #queue} queues it for the next. */
  private static final class HandOffQueue extends java.util.concurrent.LinkedTransferQueue<Runnable> {
    private static final long serialVersionUID = 1L;

    @Override
    public boolean offer(Runnable task) {
      return tryTransfer(task);
    }

    void queue(Runnable task) {
      super.offer(task);
    }
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
   * What {@link #handOver()} is, over {@code workers}: each task on a worker named as an I/O one; an {@link Error} of a pool that cannot start a thread ("unable to create
   * native thread") reaches the caller as a {@link RejectedExecutionException}: refused like a call past a bound, a
   * failed call the elector retries (as a callback lane keeps a hand-over for a retry), never an Error out of the
   * caller's step on the loop, which would fail the election.
   */
  static java.util.concurrent.Executor handOverTo(ExecutorService workers) {
    return task -> {
      try {
        workers.execute(named(task));
      } catch (Error e) {
        throw new RejectedExecutionException("no thread could be started for the call: " + e, e);
      }
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
    // The bound each place of this one is a place of too, or null.
    private final InFlight within;

    InFlight(int limit, String what) {
      this(limit, what, null);
    }

    private InFlight(int limit, String what, InFlight within) {
      this.limit = limit;
      this.what = what;
      this.within = within;
    }

    /**
     * A bound of {@code limit} places of its own, each taken also among this one's: one runner's share, so a
     * runner whose calls never end holds at most {@code limit} of the JVM's places.
     */
    InFlight share(int limit, String what) {
      return new InFlight(limit, what, this);
    }

    /** Takes a place, or returns false at once when {@code limit} are taken (here or in the bound it is within). */
    boolean tryAcquire() {
      if (inFlight.incrementAndGet() > limit) {
        inFlight.decrementAndGet();
        return false;
      }
      if (within != null && !within.tryAcquire()) {
        inFlight.decrementAndGet();
        return false;
      }
      return true;
    }

    void release() {
      inFlight.decrementAndGet();
      if (within != null) {
        within.release();
      }
    }

    /**
     * Takes a place of this bound only, not of the one it is within: for a task of a pool that takes that one's
     * itself ({@link BoundedCalls} over the JVM's bound), so the place is counted once there. Returns false at
     * once when {@code limit} are taken here.
     */
    boolean tryAcquireHere() {
      if (inFlight.incrementAndGet() > limit) {
        inFlight.decrementAndGet();
        return false;
      }
      return true;
    }

    /** Gives back a place taken by {@link #tryAcquireHere()}. */
    void releaseHere() {
      inFlight.decrementAndGet();
    }

    /** Places taken now. */
    int inFlight() {
      return inFlight.get();
    }

    /** Why one more is refused, for the failure's message. */
    String refusal() {
      if (within != null && inFlight.get() < limit) {
        return within.refusal();
      }
      return limit + " " + what + " are in flight" + (within == null ? " in this JVM already"
          : " already (the earlier ones got no answer yet)");
    }
  }
}
