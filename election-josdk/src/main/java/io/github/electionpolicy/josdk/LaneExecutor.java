package io.github.electionpolicy.josdk;

import io.github.electionpolicy.josdk.Lanes.Lane;
import io.github.electionpolicy.josdk.RunsHere.RunHere;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reconciliation executor of a {@link ShardedOperator}: JOSDK's (the configured one), fed so that a shard that
 * moves here is reconciled at once even while other shards' bulk work waits. JOSDK submits one task per reconciliation
 * and its pool runs them first in, first out; a shard that moves here submits one task per cached resource of the shard
 * at once (from {@link ShardMoves#moved}, synchronously, on the thread that starts the shard), so without this the
 * first reconciliation of the last of several shards that move together would wait behind every resource of the shards
 * started before it.
 *
 * <p>So tasks wait here in lanes: one lane for the tasks submitted on a thread inside {@link #moving(IntSupplier)} (a
 * new lane for each move), one for every other task (informers' changes, retries, re-reconciliations JOSDK submits from
 * its own threads). The lanes are fed to the pool round-robin, one task of each non-empty lane in turn, and only as
 * many at a time as the pool has threads, so that none waits in the pool's own queue: a moved shard's first
 * reconciliation starts once at most one task of each other lane started before it. No lane is starved, and each task
 * runs once. The pool's size is read once: a {@link ThreadPoolExecutor}'s core size (its maximum size if it queues
 * nothing, as a {@link SynchronousQueue}), a {@link ForkJoinPool}'s parallelism, or else JOSDK's {@code
 * concurrentReconciliationThreads()} (which then also bounds how many reconciliations run at once).
 *
 * <p>The lifecycle is the pool's as JOSDK expects it: after {@link #shutdown()} no task is accepted (a {@link
 * RejectedExecutionException}, or the pool's own rejection once it is shut down) and the tasks that wait here still
 * run, fed as before; the pool is shut down once none waits. {@link #shutdownNow()} shuts the pool down at once and
 * returns the tasks that wait here and those the pool returns, and interrupts the tasks running on a thread that is not
 * the pool's (below) as the pool does its threads, only while they run. A task the pool rejects while it runs (it was
 * shut down by someone else) is dropped and logged, as JOSDK would have lost it; one it rejects while it runs, when
 * handed over from a pool thread whose task just ended (a pool that queues nothing has all its threads busy then, that
 * one included), runs on that thread instead; one it rejects while it runs, handed over from another thread (a freed
 * thread may not be back in the pool yet), waits again first in its lane, fed again when a task in flight ends and a
 * millisecond later in any case, never run on that thread: JOSDK submits from inside its event processor's monitor,
 * which a managed dependent of the task may need (review r2, finding 5). A task the pool runs inside its {@code execute} on the
 * thread that handed it over (a {@code CallerRunsPolicy}) runs there once, what it throws logged, and each next task is
 * handed over only once it returned (not from inside it, a level deeper on the stack each). A task that runs on a pool
 * thread after another one there begins without the interrupt that one left, as a pool's next task does (its run inside
 * the pool's {@code execute} included), unless {@link #shutdownNow()}, ours or the pool's own, was called after that
 * one ended. Thread-safe: the lanes and counts are guarded by one monitor, which is never held while the pool or a task
 * runs.
 */
final class LaneExecutor extends AbstractExecutorService {

  private static final Logger LOG = LoggerFactory.getLogger(ShardedOperator.class);

  private final ExecutorService delegate;
  private final int threads;
  private final Object lock = new Object();
  // Feeds the pool again soon after it refused a hand-over from a thread that is not its own.
  private final Refeeds refeeds = new Refeeds(() -> feed(false));
  // The lane of the move this thread is firing, if any.
  private final ThreadLocal<Lane> move = new ThreadLocal<>();
  // The task this thread hands to the pool, while inside the pool's execute: a pool that runs a task it cannot take on
  // the caller (CallerRunsPolicy) runs it right there, and it must then not feed from inside that call.
  private final ThreadLocal<Handed> handingHere = new ThreadLocal<>();
  // Set while the pool runs one of this executor's tasks on this thread: an interrupt shutdownNow sends a task run here
  // is then the pool's thread's too, and stays.
  private final ThreadLocal<Boolean> poolRuns = new ThreadLocal<>();
  // Guarded by lock: every task not yet handed to the pool, in its lane.
  private final Lanes lanes = new Lanes();
  // Guarded by lock: tasks handed to the pool (or run on a submitting thread) and not yet ended; runs of tasks on a
  // thread that is not the pool's, or inside the pool's execute, under way (termination waits for them and
  // shutdownNow interrupts them, as the pool does its own); hands to the pool under way; the lifecycle.
  private int inFlight;
  private int handing;
  // Guarded by lock: of those hands, the ones running their task inside the pool's execute (runOnCaller).
  private int handsRunningTask;
  private final RunsHere runningHere = new RunsHere();
  private boolean shutdown;
  private boolean delegateShutdown;
  private boolean stoppedNow;

  /**
   * Feeds {@code delegate}.
   *
   * @param delegate the configured reconciliation executor
   * @param configuredThreads JOSDK's {@code concurrentReconciliationThreads()}: the size of a pool of another kind
   */
  LaneExecutor(ExecutorService delegate, int configuredThreads) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.threads = Math.max(1, threadsOf(delegate, configuredThreads));
  }

  private static int threadsOf(ExecutorService delegate, int configuredThreads) {
    if (delegate instanceof ThreadPoolExecutor pool) {
      return pool.getQueue() instanceof SynchronousQueue ? pool.getMaximumPoolSize() : pool.getCorePoolSize();
    }
    if (delegate instanceof ForkJoinPool pool) {
      return pool.getParallelism();
    }
    return configuredThreads;
  }

  /** How many tasks are handed to the pool at most at a time. */
  int threads() {
    return threads;
  }

  /**
   * Runs {@code firing}, with every task submitted on this thread meanwhile in a lane of its own: the tasks of a shard
   * that moves here.
   *
   * @return what {@code firing} returned
   */
  int moving(IntSupplier firing) {
    Lane previous = move.get();
    move.set(new Lane());
    try {
      return firing.getAsInt();
    } finally {
      if (previous == null) {
        move.remove();
      } else {
        move.set(previous);
      }
    }
  }

  @Override
  public void execute(Runnable task) {
    Objects.requireNonNull(task, "task");
    Lane lane = move.get();
    boolean rejected;
    synchronized (lock) {
      rejected = shutdown || delegate.isShutdown();
      if (!rejected) {
        lanes.add(lane, task);
      }
    }
    if (rejected) {
      if (delegate.isShutdown()) {
        delegate.execute(task); // rejected as the pool rejects
        return;
      }
      throw new RejectedExecutionException("the reconciliation executor is shut down");
    }
    feed(false); // not as a pool thread whose task ended: it never gives a task back then
  }

  /**
   * Counts a run on this thread that begins (guarded by lock); after {@link #shutdownNow()}, it begins interrupted, as
   * a pool's thread would.
   */
  private RunHere beginHere() {
    return runningHere.begin(poolRuns.get() != null, stoppedNow);
  }

  /**
   * Counts a run on this thread that ended (guarded by lock; an interrupt {@link #shutdownNow()} sent it is taken back
   * as {@link RunsHere#end} says), and wakes the termination that waits for it.
   */
  private void endHere(RunHere here) {
    runningHere.end(here);
    lock.notifyAll();
  }

  /**
   * Hands waiting tasks to the pool while it has a free thread, then shuts it down if it is due and none waits. On a
   * pool thread whose task just ended ({@code onPoolThread}), a task the pool rejects while it is not shut down is
   * returned, to run on this thread: that thread is the one the task's slot counted, still busy until it returns, and
   * a pool that queues nothing rejects a task while all its threads are busy. On another thread, such a task goes back
   * to the front of its lane, fed again when a task in flight ends and a millisecond later ({@link Refeeds}); it is
   * never returned to run on a thread that is not the pool's.
   *
   * @return the task to run on this thread now, or null
   */
  private Handed feed(boolean onPoolThread) {
    while (true) {
      Handed next = null;
      boolean shutDelegate = false;
      synchronized (lock) {
        if (!lanes.isEmpty() && inFlight < threads && !delegateShutdown) {
          Lanes.Polled polled = lanes.poll();
          next = new Handed(polled.lane(), polled.task());
          inFlight++;
          handing++;
        } else if (shutdown && !delegateShutdown && lanes.isEmpty() && handing == 0) {
          delegateShutdown = true;
          shutDelegate = true;
          lock.notifyAll();
        } else {
          return null;
        }
      }
      if (shutDelegate) {
        delegate.shutdown();
        return null;
      }
      Handed outer = handingHere.get();
      handingHere.set(next);
      try {
        delegate.execute(next);
        refeeds.taken();
      } catch (RuntimeException | Error rejected) {
        if (!delegate.isShutdown()) {
          if (onPoolThread) {
            return next; // its slot is this thread's: it runs here (handing ends in the finally)
          }
          // Another thread: a pool thread whose task ended may not be back in the pool yet. The task waits again first
          // in its lane: a task still in flight feeds it when it ends, and, in case none is, it is handed over again
          // a millisecond from now. Never run here: JOSDK submits from inside its event processor's monitor, which
          // a managed dependent of the reconciliation may need, and the start of a shard would wait for ever (review
          // r2, finding 5).
          synchronized (lock) {
            ended();
            lanes.pushFront(next.lane, next.task);
          }
          refeeds.refused();
          return null;
        }
        boolean quiet;
        synchronized (lock) {
          ended();
          quiet = delegateShutdown;
          if (stoppedNow) {
            // Refused by a pool that shutdownNow() shut down: never run, returned by it (it waits for this hand).
            lanes.pushFront(next.lane, next.task);
            quiet = true;
          }
        }
        if (!quiet) {
          LOG.error("The reconciliation executor rejected a reconciliation, which is dropped: JOSDK counts its resource "
              + "as being reconciled, and may not reconcile it again in this process", rejected);
        }
      } finally {
        if (outer == null) {
          handingHere.remove();
        } else {
          handingHere.set(outer);
        }
        synchronized (lock) {
          handing--;
          lock.notifyAll(); // shutdownNow may wait for it
        }
      }
    }
  }

  /** Counts a handed task's end (guarded by lock). */
  private void ended() {
    inFlight--;
  }

  @Override
  public void shutdown() {
    synchronized (lock) {
      shutdown = true;
    }
    feed(false); // not as a pool thread whose task ended: it never gives a task back then
  }

  @Override
  public List<Runnable> shutdownNow() {
    List<Runnable> waiting = new ArrayList<>();
    synchronized (lock) {
      shutdown = true;
      delegateShutdown = true;
      stoppedNow = true;
      runningHere.interruptAll(); // as the pool interrupts its threads
      lanes.drainTo(waiting);
      lock.notifyAll();
    }
    for (Runnable queued : delegate.shutdownNow()) {
      if (queued instanceof Handed handed) {
        waiting.add(handed.task);
        synchronized (lock) {
          ended(); // it never runs
        }
      } else {
        waiting.add(queued);
      }
    }
    // A hand under way (not one running its task inside the pool's execute, which may take long) that the pool
    // refuses puts its task back in its lane: it never runs, and is returned here, once the hand ended. Waited for a
    // second at most: a pool whose rejection policy blocks the caller may never let it end.
    boolean interrupted = false;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
    synchronized (lock) {
      while (handing > handsRunningTask) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      lanes.drainTo(waiting);
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return waiting;
  }

  @Override
  public boolean isShutdown() {
    synchronized (lock) {
      return shutdown || delegate.isShutdown();
    }
  }

  @Override
  public boolean isTerminated() {
    synchronized (lock) {
      return delegateShutdown && runningHere.isEmpty() && delegate.isTerminated();
    }
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + unit.toNanos(timeout);
    synchronized (lock) {
      // A task runs on a thread not the pool's when the pool had none back yet: it is waited for as well.
      while (!delegateShutdown || !runningHere.isEmpty()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
    }
    return delegate.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
  }

  /** How many tasks wait here, not yet handed to the pool (for tests). */
  int waiting() {
    synchronized (lock) {
      return lanes.waiting();
    }
  }

  @Override
  public String toString() {
    return "LaneExecutor{" + threads + " at a time, " + delegate + "}";
  }

  /** A task as the pool runs it: its end, however it ends, frees its thread for the next waiting task. */
  private final class Handed implements Runnable {
    private final Lane lane;
    private final Runnable task;

    Handed(Lane lane, Runnable task) {
      this.lane = lane;
      this.task = task;
    }

    /**
     * As the pool runs it: inside its {@code execute} on the thread that handed it over ({@link #runOnCaller()}), or
     * else on a thread of the pool's ({@link #runAndFeed()}).
     */
    @Override
    public void run() {
      if (handingHere.get() == this) {
        runOnCaller();
        return;
      }
      Boolean outer = poolRuns.get();
      poolRuns.set(Boolean.TRUE);
      try {
        runAndFeed();
      } finally {
        if (outer == null) {
          poolRuns.remove();
        }
      }
    }

    /**
     * Runs the task, then the next that feeding gives back to this thread, and so on; then throws the first task's
     * throwable, if any, as the task alone would have (the pool's thread ends with it). On a pool's thread.
     */
    private void runAndFeed() {
      Throwable first = null;
      for (Handed current = this; current != null; ) {
        try {
          current.task.run();
        } catch (Throwable thrown) { // a checked one too, thrown sneakily: the slot is freed whatever ends the task
          if (first == null) {
            first = thrown;
          } else {
            first.addSuppressed(thrown);
          }
        }
        // On a pool thread, the interrupt the task left is cleared as soon as it ended, before the next one is handed
        // over: a next task run on this thread (returned by feed, or run by the pool inside its execute, a
        // CallerRunsPolicy) begins without it, as the pool's next task does, while an interrupt sent from now on (a
        // shutdownNow, ours or the pool's own by someone else) stays. If none runs here next, it is put back.
        boolean left = Thread.interrupted();
        synchronized (lock) {
          ended();
        }
        current = feed(true);
        if (current == null) {
          if (left) {
            Thread.currentThread().interrupt();
          }
        } else {
          synchronized (lock) {
            if (stoppedNow) { // as the pool does: stopping, its next task begins interrupted
              Thread.currentThread().interrupt();
            }
          }
        }
      }
      if (first instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (first instanceof Error error) {
        throw error;
      }
      if (first != null) {
        throw new java.lang.reflect.UndeclaredThrowableException(first);
      }
    }

    /**
     * Runs the task inside the pool's {@code execute} on the thread that handed it (the pool runs a task it cannot
     * take on the caller): as on a submitting thread, what it throws is logged (thrown out of {@code execute}, it
     * would be taken for a rejection and the task run again), termination waits for it, and it feeds nothing (a task
     * fed from here would nest a level deeper for each waiting task): the handing goes on once {@code execute}
     * returned.
     */
    private void runOnCaller() {
      RunHere here;
      // Whether the thread was interrupted before this task: an interrupt there belongs to whoever handed it over (a
      // task this one runs nested in, on a pool thread; shutdownNow) and stays.
      boolean before = Thread.currentThread().isInterrupted();
      synchronized (lock) {
        here = beginHere();
        handsRunningTask++;
      }
      try {
        task.run();
      } catch (Throwable thrown) { // user code: whatever it throws must not come out of the pool's execute
        LOG.warn("A reconciliation the pool ran on the thread that handed it over (its rejection policy) failed",
            thrown);
      } finally {
        // On a pool thread, the interrupt this task left is not the next one's (feed may hand that over inside the
        // pool's execute on this thread next), unless one was there before it or a shutdownNow (ours, the pool's)
        // came: cleared, then put back if stopping, read after the clear, as the pool does between its tasks.
        boolean left = here.poolThread() && !before && Thread.interrupted();
        boolean poolStopping = left && delegate.isShutdown();
        synchronized (lock) {
          ended();
          handsRunningTask--;
          endHere(here);
          if (left && (poolStopping || stoppedNow)) {
            Thread.currentThread().interrupt();
          }
        }
      }
    }

    @Override
    public String toString() {
      return task.toString();
    }
  }
}
