package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.testsupport.Await;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The reconciliation executor of a {@link ShardedOperator}, deterministically: on a pool whose tasks the test runs one
 * by one on its own thread (its size given, as for a pool that is no {@code ThreadPoolExecutor}), and on real pools for
 * the size and a task that throws.
 */
class LaneExecutorTest {

  /** A pool that only queues; the test runs its tasks, in the order it chooses. */
  static final class StepPool extends AbstractExecutorService {
    final ArrayDeque<Runnable> queued = new ArrayDeque<>();
    boolean shutdown;

    @Override
    public void execute(Runnable task) {
      if (shutdown) {
        throw new RejectedExecutionException("step pool shut down");
      }
      queued.addLast(task);
    }

    /** Runs the oldest queued task, as the pool's thread would (what it throws stays on that thread). */
    void runNext() {
      Runnable task = queued.pollFirst();
      assertThat(task).as("a task queued in the pool").isNotNull();
      try {
        task.run();
      } catch (RuntimeException | Error thrown) {
        // a pool thread's end
      }
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      List<Runnable> left = new ArrayList<>(queued);
      queued.clear();
      return left;
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown && queued.isEmpty();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return isTerminated();
    }
  }

  private final StepPool pool = new StepPool();
  private final List<String> ran = new ArrayList<>();

  private Runnable task(String name) {
    return () -> ran.add(name);
  }

  private void submitMoved(LaneExecutor lanes, String prefix, int count) {
    int fired = lanes.moving(() -> {
      for (int i = 1; i <= count; i++) {
        lanes.execute(task(prefix + i));
      }
      return count;
    });
    assertThat(fired).isEqualTo(count);
  }

  @Test
  void theLanesAreFedRoundRobinOneTaskPerThreadAtATime() {
    LaneExecutor lanes = new LaneExecutor(pool, 1);
    for (int i = 1; i <= 4; i++) {
      lanes.execute(task("o" + i));
    }
    submitMoved(lanes, "a", 5);
    submitMoved(lanes, "b", 2);
    assertThat(pool.queued).hasSize(1);
    assertThat(lanes.waiting()).isEqualTo(10);
    while (!pool.queued.isEmpty()) {
      assertThat(pool.queued).hasSize(1);
      pool.runNext();
    }
    assertThat(ran).containsExactly("o1", "o2", "a1", "b1", "o3", "a2", "b2", "o4", "a3", "a4", "a5");
    assertThat(lanes.waiting()).isZero();
  }

  @Test
  void aShardMovedLastStartsAfterAtMostOneTaskOfEachOtherLane() {
    LaneExecutor lanes = new LaneExecutor(pool, 2);
    submitMoved(lanes, "a", 100);
    submitMoved(lanes, "b", 100);
    submitMoved(lanes, "c", 100);
    lanes.execute(task("o1"));
    assertThat(pool.queued).as("no more handed to the pool than its threads").hasSize(2);
    while (!ran.contains("c1")) {
      pool.runNext();
      assertThat(pool.queued.size()).isLessThanOrEqualTo(2);
    }
    // a1 and a2 were handed to the pool's two threads before b and c moved; then one of each lane in turn.
    assertThat(ran).containsExactly("a1", "a2", "a3", "b1", "c1");
    while (!pool.queued.isEmpty()) {
      pool.runNext();
    }
    assertThat(ran).hasSize(301).doesNotHaveDuplicates();
  }

  @Test
  void aTaskThatThrowsFreesItsThreadForTheNext() {
    LaneExecutor lanes = new LaneExecutor(pool, 1);
    lanes.execute(() -> {
      throw new IllegalStateException("a reconciliation's failure");
    });
    lanes.execute(() -> {
      throw new AssertionError("an Error");
    });
    lanes.execute(task("after"));
    pool.runNext();
    pool.runNext();
    assertThat(pool.queued).hasSize(1);
    pool.runNext();
    assertThat(ran).containsExactly("after");
    lanes.execute(task("next"));
    assertThat(pool.queued).as("the permits are all free again").hasSize(1);
  }

  @Test
  void afterShutdownTheWaitingTasksStillRunAndThePoolShutsDownOnceNoneWaits() throws InterruptedException {
    LaneExecutor lanes = new LaneExecutor(pool, 1);
    lanes.execute(task("o1"));
    submitMoved(lanes, "a", 2);
    lanes.shutdown();
    assertThat(lanes.isShutdown()).isTrue();
    assertThat(pool.isShutdown()).as("the pool still gets the waiting tasks").isFalse();
    assertThatThrownBy(() -> lanes.execute(task("late"))).isInstanceOf(RejectedExecutionException.class);
    assertThat(lanes.awaitTermination(0, TimeUnit.SECONDS)).isFalse();
    assertThat(lanes.isTerminated()).isFalse();
    pool.runNext();
    assertThat(pool.isShutdown()).isFalse();
    pool.runNext();
    assertThat(pool.isShutdown()).as("shut down once no task waits here, a2 handed to it").isTrue();
    assertThat(lanes.isTerminated()).isFalse();
    pool.runNext();
    assertThat(ran).containsExactly("o1", "a1", "a2");
    assertThat(lanes.isTerminated()).isTrue();
    assertThat(lanes.awaitTermination(0, TimeUnit.SECONDS)).isTrue();
    assertThatThrownBy(() -> lanes.execute(task("later"))).isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("step pool");
  }

  @Test
  void shutdownWithNothingWaitingShutsThePoolDownAtOnce() throws InterruptedException {
    LaneExecutor lanes = new LaneExecutor(pool, 1);
    lanes.shutdown();
    assertThat(pool.isShutdown()).isTrue();
    assertThat(lanes.awaitTermination(1, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void shutdownNowReturnsTheWaitingTasksAndThePoolsAndRejectsTheNext() {
    LaneExecutor lanes = new LaneExecutor(pool, 1);
    Runnable o1 = task("o1");
    Runnable o2 = task("o2");
    lanes.execute(o1);
    lanes.execute(o2);
    List<Runnable> moved = new ArrayList<>();
    lanes.moving(() -> {
      Runnable a1 = task("a1");
      moved.add(a1);
      lanes.execute(a1);
      return 1;
    });
    List<Runnable> left = lanes.shutdownNow();
    assertThat(left).containsExactlyInAnyOrder(o1, o2, moved.get(0));
    assertThat(pool.isShutdown()).isTrue();
    assertThat(lanes.isTerminated()).isTrue();
    assertThat(ran).isEmpty();
    assertThatThrownBy(() -> lanes.execute(task("late"))).isInstanceOf(RejectedExecutionException.class);
  }

  @Test
  void aTaskThePoolRejectsIsDroppedAndFreesItsThread() {
    LaneExecutor lanes = new LaneExecutor(pool, 1);
    lanes.execute(task("o1"));
    lanes.execute(task("o2"));
    pool.shutdown(); // by someone else
    pool.runNext(); // o1 ends; the pool rejects o2
    assertThat(ran).containsExactly("o1");
    assertThat(lanes.waiting()).isZero();
    assertThat(lanes.isShutdown()).isTrue();
    assertThatThrownBy(() -> lanes.execute(task("o3"))).isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("step pool");
  }

  @Test
  void theSizeIsThePoolsThreadsOrElseTheConfiguredCount() {
    ExecutorService fixed = Executors.newFixedThreadPool(3);
    ThreadPoolExecutor handOff = new ThreadPoolExecutor(0, 7, 1, TimeUnit.SECONDS, new SynchronousQueue<>());
    ThreadPoolExecutor queueing = new ThreadPoolExecutor(2, 9, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
    ForkJoinPool forkJoin = new ForkJoinPool(5);
    try {
      assertThat(new LaneExecutor(fixed, 50).threads()).isEqualTo(3);
      assertThat(new LaneExecutor(handOff, 50).threads()).isEqualTo(7);
      assertThat(new LaneExecutor(queueing, 50).threads()).isEqualTo(2);
      assertThat(new LaneExecutor(forkJoin, 50).threads()).isEqualTo(5);
      assertThat(new LaneExecutor(pool, 4).threads()).isEqualTo(4);
      assertThat(new LaneExecutor(pool, 0).threads()).isEqualTo(1);
    } finally {
      fixed.shutdownNow();
      handOff.shutdownNow();
      queueing.shutdownNow();
      forkJoin.shutdownNow();
    }
  }

  /**
   * A bounded pool that queues nothing (a {@link SynchronousQueue}) rejects a task handed to it while all its threads
   * are busy, and the thread a finishing task frees is still busy while that task's end feeds the next: every next
   * task was rejected and dropped, and JOSDK, which marks a resource as under processing when it submits its task,
   * would never reconcile those resources again.
   */
  @Test
  void onABoundedHandOffPoolEveryTaskRunsThoughTheFinishingThreadIsStillBusy() throws InterruptedException {
    ThreadPoolExecutor handOff = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new SynchronousQueue<>());
    LaneExecutor lanes = new LaneExecutor(handOff, 50);
    CountDownLatch ran = new CountDownLatch(20);
    CountDownLatch first = new CountDownLatch(1);
    lanes.execute(() -> {
      try {
        first.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      ran.countDown();
    });
    lanes.moving(() -> {
      for (int i = 0; i < 19; i++) {
        lanes.execute(ran::countDown);
      }
      return 19;
    });
    first.countDown();
    assertThat(ran.await(30, TimeUnit.SECONDS)).as("every task ran, %s left", ran.getCount()).isTrue();
    lanes.shutdown();
    assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
  }

  /**
   * A task that leaves its thread interrupted (it caught an interrupt and restored it, or interrupted itself) must not
   * hand that interrupt to the next task: a pool clears it between its tasks, and so does this executor when it runs
   * the next task on the same thread (a pool that queues nothing rejects it while that thread is still busy). Before,
   * the next reconciliation began interrupted, and the first blocking call it made failed.
   */
  @Test
  void aTaskRunOnTheThreadOfOneThatLeftItInterruptedBeginsNotInterrupted() throws InterruptedException {
    ThreadPoolExecutor handOff = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new SynchronousQueue<>());
    LaneExecutor lanes = new LaneExecutor(handOff, 50);
    CountDownLatch first = new CountDownLatch(1);
    List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
    CountDownLatch ran = new CountDownLatch(2);
    lanes.execute(() -> {
      try {
        first.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Thread.currentThread().interrupt(); // leaves its thread interrupted
    });
    for (String name : List.of("second", "third")) {
      lanes.execute(() -> {
        seen.add(name + (Thread.currentThread().isInterrupted() ? " began interrupted" : " began clear")
            + " on " + Thread.currentThread().getName());
        ran.countDown();
      });
    }
    first.countDown();
    assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(seen).allMatch(line -> line.contains("began clear"), "every task began with no interrupt");
    lanes.shutdown();
    assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
  }

  /**
   * Review h-review21, of the fix above: the pool's own {@code shutdownNow()}, called by someone else while the
   * executor hands the next task over from a pool thread whose task just ended (here right after the executor read
   * that the pool was not shut down, before it runs the rejected task on that thread), interrupts that thread; the
   * clear meant for the interrupt the task before left swallowed it, so the next task ran uninterrupted after the
   * pool's {@code shutdownNow()}. A pool clears only before it reads whether it is stopping; the interrupt must stay.
   */
  @Test
  void aTaskRunOnAPoolThreadAfterThePoolsShutdownNowByAnotherBeginsInterrupted() throws InterruptedException {
    java.util.concurrent.atomic.AtomicReference<Thread> armed = new java.util.concurrent.atomic.AtomicReference<>();
    ThreadPoolExecutor handOff = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new SynchronousQueue<>()) {
      @Override
      public boolean isShutdown() {
        boolean shutdown = super.isShutdown();
        if (armed.compareAndSet(Thread.currentThread(), null)) {
          // Someone else shuts the pool down now, just after this read.
          Thread someoneElse = new Thread(this::shutdownNow, "someone-else");
          someoneElse.start();
          joinUninterruptibly(someoneElse);
        }
        return shutdown;
      }
    };
    LaneExecutor lanes = new LaneExecutor(handOff, 50);
    CountDownLatch first = new CountDownLatch(1);
    CountDownLatch ran = new CountDownLatch(1);
    boolean[] secondBeganInterrupted = {false};
    try {
      lanes.execute(() -> {
        try {
          first.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        armed.set(Thread.currentThread()); // its thread hands the next task over once this one returned
      });
      lanes.execute(() -> {
        secondBeganInterrupted[0] = Thread.currentThread().isInterrupted();
        ran.countDown();
      });
      first.countDown();
      assertThat(ran.await(30, TimeUnit.SECONDS)).as("the second task ran").isTrue();
      assertThat(handOff.isShutdown()).as("the pool shut down by someone else").isTrue();
      assertThat(secondBeganInterrupted[0]).as("the second task began interrupted, after the pool's shutdownNow")
          .isTrue();
    } finally {
      handOff.shutdownNow();
      assertThat(handOff.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
  }

  private static void joinUninterruptibly(Thread thread) {
    boolean interrupted = false;
    while (true) {
      try {
        thread.join();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Review h-review21: on a pool whose rejection policy runs the task on the caller ({@code CallerRunsPolicy}), the
   * task handed over from a pool thread whose task just ended runs inside the pool's {@code execute} on that thread,
   * before the clear of the fix above: it began with the interrupt the task before left there.
   */
  @Test
  void onACallerRunsPoolATaskRunOnThePoolThreadOfOneThatLeftItInterruptedBeginsNotInterrupted()
      throws InterruptedException {
    ThreadPoolExecutor callerRuns = callerRunsHandOff();
    LaneExecutor lanes = new LaneExecutor(callerRuns, 50);
    CountDownLatch first = new CountDownLatch(1);
    List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
    CountDownLatch ran = new CountDownLatch(2);
    String[] firstThread = {null};
    lanes.execute(() -> {
      firstThread[0] = Thread.currentThread().getName();
      try {
        first.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Thread.currentThread().interrupt(); // leaves its thread interrupted
    });
    for (String name : List.of("second", "third")) {
      lanes.execute(() -> {
        seen.add(name + (Thread.currentThread().isInterrupted() ? " began interrupted" : " began clear")
            + " on " + Thread.currentThread().getName());
        ran.countDown();
      });
    }
    first.countDown();
    assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(seen).as("on the first task's thread, %s", firstThread[0])
        .allMatch(line -> line.endsWith(" on " + firstThread[0]));
    assertThat(seen).allMatch(line -> line.contains("began clear"), "every task began with no interrupt");
    lanes.shutdown();
    assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
  }

  /**
   * Review h-review21's note: on a {@code CallerRunsPolicy} pool, the tasks handed over from a pool thread whose task
   * ended run one after another inside the pool's {@code execute} on that thread; each must begin without the
   * interrupt the one before it there left, as the pool's next task would.
   */
  @Test
  void onACallerRunsPoolTasksRunOneAfterAnotherOnThePoolThreadEachBeginNotInterrupted() throws InterruptedException {
    ThreadPoolExecutor callerRuns = callerRunsHandOff();
    LaneExecutor lanes = new LaneExecutor(callerRuns, 50);
    CountDownLatch first = new CountDownLatch(1);
    List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
    CountDownLatch ran = new CountDownLatch(3);
    String[] firstThread = {null};
    lanes.execute(() -> {
      firstThread[0] = Thread.currentThread().getName();
      try {
        first.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    for (String name : List.of("second", "third", "fourth")) {
      lanes.execute(() -> {
        seen.add(name + (Thread.currentThread().isInterrupted() ? " began interrupted" : " began clear")
            + " on " + Thread.currentThread().getName());
        Thread.currentThread().interrupt(); // each leaves its thread interrupted
        ran.countDown();
      });
    }
    first.countDown();
    assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(seen).as("on the first task's thread, %s", firstThread[0])
        .allMatch(line -> line.endsWith(" on " + firstThread[0]));
    assertThat(seen).allMatch(line -> line.contains("began clear"), "every task began with no interrupt");
    lanes.shutdown();
    assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
  }

  /**
   * Review h-attack18: on a pool that queues nothing, a task submitted from another thread (an informer's) while the
   * only thread's task has ended but the thread is not yet back in the pool (here held in {@code afterExecute}) is
   * rejected by the pool although the executor counts no task in flight; it was dropped, so JOSDK, which marks its
   * resource as under processing before it submits, would never reconcile it again. It now runs: fed again a
   * millisecond later (no task in flight is left to feed it), once the thread is back.
   */
  @Test
  void onAHandOffPoolATaskSubmittedWhileTheFreedThreadIsNotYetBackStillRuns() throws InterruptedException {
    CountDownLatch afterFirst = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ThreadPoolExecutor handOff = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new SynchronousQueue<>()) {
      @Override
      protected void afterExecute(Runnable r, Throwable t) {
        afterFirst.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    };
    LaneExecutor lanes = new LaneExecutor(handOff, 50);
    CountDownLatch ran = new CountDownLatch(2);
    try {
      lanes.execute(ran::countDown);
      afterFirst.await(); // the first task ended; its thread is still the pool's busy one
      lanes.execute(ran::countDown);
      release.countDown();
      lanes.shutdown();
      assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      assertThat(ran.getCount()).as("tasks that never ran").isZero();
    } finally {
      release.countDown();
      handOff.shutdownNow();
    }
  }

  /**
   * Review h-attack18, and review r2's finding 5: a task submitted while the hand-off pool has no thread back yet was
   * run on its submitting thread, which may hold JOSDK's event processor's monitor (a managed dependent that sends an
   * event then deadlocked the start of a shard: ShardedOperatorStartInlineDeadlockTest). It now waits in its lane and
   * runs on the pool's thread once that is back; termination waits for it there, as {@code OperatorTerm.stop()} (and so
   * {@code ShardedOperator.close()}) relies on to return only once no reconciliation runs.
   */
  @Test
  void aTaskSubmittedWhileTheFreedThreadIsNotYetBackRunsOnThePoolAndTerminationWaitsForIt()
      throws InterruptedException {
    CountDownLatch afterFirst = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ThreadPoolExecutor handOff = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new SynchronousQueue<>()) {
      @Override
      protected void afterExecute(Runnable r, Throwable t) {
        afterFirst.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    };
    LaneExecutor lanes = new LaneExecutor(handOff, 50);
    CountDownLatch secondStarted = new CountDownLatch(1);
    CountDownLatch secondMayEnd = new CountDownLatch(1);
    Thread[] ranOn = new Thread[1];
    Thread informer = new Thread(() -> lanes.execute(() -> {
      ranOn[0] = Thread.currentThread();
      secondStarted.countDown();
      try {
        secondMayEnd.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }));
    try {
      lanes.execute(() -> { });
      afterFirst.await();
      informer.start();
      informer.join(); // the submit returned: the task did not run on the informer's thread
      assertThat(secondStarted.getCount()).as("started while the pool's thread was not back").isOne();
      release.countDown();
      assertThat(secondStarted.await(30, TimeUnit.SECONDS)).as("started once the thread was back").isTrue();
      assertThat(ranOn[0]).as("the thread it ran on").isNotSameAs(informer);
      lanes.shutdown();
      assertThat(lanes.isTerminated()).as("terminated while a task runs").isFalse();
      assertThat(lanes.awaitTermination(1, TimeUnit.MILLISECONDS)).as("awaited while a task runs").isFalse();
      secondMayEnd.countDown();
      assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      assertThat(lanes.isTerminated()).isTrue();
    } finally {
      release.countDown();
      secondMayEnd.countDown();
      handOff.shutdownNow();
    }
  }

  /**
   * Review h-attack19: {@code shutdownNow()} interrupts the tasks that run, as the pool does its threads, also one
   * submitted while the hand-off pool had no thread back yet: JOSDK's stop interrupts the reconciliations still
   * running after its termination timeout, and the operator's stop then waits for them to end. The submitting thread
   * is not left interrupted.
   */
  @Test
  void shutdownNowInterruptsATaskSubmittedWhileTheFreedThreadWasNotYetBack() throws InterruptedException {
    CountDownLatch afterFirst = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ThreadPoolExecutor handOff = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new SynchronousQueue<>()) {
      @Override
      protected void afterExecute(Runnable r, Throwable t) {
        afterFirst.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    };
    LaneExecutor lanes = new LaneExecutor(handOff, 50);
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    boolean[] informerLeftInterrupted = {true};
    Thread informer = new Thread(() -> {
      lanes.execute(() -> {
        started.countDown();
        try {
          never.await(); // a reconciliation that ends only when interrupted
        } catch (InterruptedException e) {
          interrupted.countDown();
          Thread.currentThread().interrupt(); // kept, as a reconciler should
        }
      });
      informerLeftInterrupted[0] = Thread.currentThread().isInterrupted();
    });
    try {
      lanes.execute(() -> { });
      afterFirst.await();
      informer.start();
      informer.join();
      release.countDown();
      assertThat(started.await(30, TimeUnit.SECONDS)).as("started once the thread was back").isTrue();
      lanes.shutdownNow();
      assertThat(interrupted.await(30, TimeUnit.SECONDS)).as("the task running on the pool interrupted").isTrue();
      assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      assertThat(informerLeftInterrupted[0]).as("the informer's thread left interrupted").isFalse();
    } finally {
      release.countDown();
      never.countDown();
      handOff.shutdownNow();
    }
  }

  /**
   * Review h-attack19, of its own fix above: a task the pool runs inside its {@code execute} on one of its own threads
   * (a {@code CallerRunsPolicy}), from inside another task there, is interrupted by {@code shutdownNow()} as that
   * thread is by the pool; once it ended, that interrupt is the outer task's too and is not taken back.
   */
  @Test
  void shutdownNowLeavesAPoolThreadInterruptedForTheTaskThatHandedOneOverInside() throws InterruptedException {
    ThreadPoolExecutor callerRuns = callerRunsHandOff();
    // Not a ThreadPoolExecutor: two at a time are handed to its one thread, so the second runs on the caller.
    ExecutorService twoAtATime = new AbstractExecutorService() {
      @Override
      public void execute(Runnable task) {
        callerRuns.execute(task);
      }

      @Override
      public void shutdown() {
        callerRuns.shutdown();
      }

      @Override
      public List<Runnable> shutdownNow() {
        return callerRuns.shutdownNow();
      }

      @Override
      public boolean isShutdown() {
        return callerRuns.isShutdown();
      }

      @Override
      public boolean isTerminated() {
        return callerRuns.isTerminated();
      }

      @Override
      public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return callerRuns.awaitTermination(timeout, unit);
      }
    };
    LaneExecutor lanes = new LaneExecutor(twoAtATime, 2);
    CountDownLatch innerStarted = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    CountDownLatch outerEnded = new CountDownLatch(1);
    boolean[] outerInterrupted = {false};
    try {
      lanes.execute(() -> {
        lanes.execute(() -> { // runs here, on the pool's thread, inside the pool's execute
          innerStarted.countDown();
          try {
            never.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
        outerInterrupted[0] = Thread.currentThread().isInterrupted();
        outerEnded.countDown();
      });
      innerStarted.await();
      lanes.shutdownNow();
      assertThat(outerEnded.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      assertThat(outerInterrupted[0]).as("the outer task still interrupted, as the pool left its thread").isTrue();
    } finally {
      never.countDown();
      callerRuns.shutdownNow();
    }
  }

  /** Review h-attack18: tasks the pool held and returned at {@code shutdownNow()} do not keep termination waiting. */
  @Test
  void afterShutdownNowTheTasksThePoolReturnedDoNotHoldTermination() throws InterruptedException {
    LaneExecutor lanes = new LaneExecutor(pool, 2);
    lanes.execute(task("o1"));
    lanes.execute(task("o2"));
    lanes.execute(task("o3"));
    assertThat(lanes.shutdownNow()).hasSize(3);
    assertThat(lanes.awaitTermination(1, TimeUnit.SECONDS)).isTrue();
    assertThat(lanes.isTerminated()).isTrue();
  }

  /** A one-thread pool that queues nothing and, when its thread is busy, runs a task on the submitting thread. */
  private static ThreadPoolExecutor callerRunsHandOff() {
    return new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new SynchronousQueue<>(),
        new ThreadPoolExecutor.CallerRunsPolicy());
  }

  /**
   * Review h-attack19: a pool whose rejection policy runs the task on the caller ({@code CallerRunsPolicy}, common
   * with a pool that queues nothing) runs a task handed over from a finishing task's thread on that thread, inside
   * {@code execute}; what such a task threw came out of the pool's {@code execute}, was taken for the pool's
   * rejection, and the task ran a second time on that thread (and its end was counted twice).
   */
  @Test
  void onACallerRunsPoolATaskThatThrowsRunsOnce() throws InterruptedException {
    ThreadPoolExecutor callerRuns = callerRunsHandOff();
    LaneExecutor lanes = new LaneExecutor(callerRuns, 50);
    CountDownLatch first = new CountDownLatch(1);
    AtomicInteger throwingRuns = new AtomicInteger();
    CountDownLatch lastRan = new CountDownLatch(1);
    try {
      lanes.execute(() -> {
        try {
          first.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      lanes.execute(() -> {
        throwingRuns.incrementAndGet();
        throw new IllegalStateException("a reconciliation's failure");
      });
      lanes.execute(lastRan::countDown);
      assertThat(lanes.waiting()).as("both wait: the pool's one thread is busy").isEqualTo(2);
      first.countDown();
      assertThat(lastRan.await(30, TimeUnit.SECONDS)).isTrue();
      lanes.shutdown();
      assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      assertThat(throwingRuns.get()).as("runs of the task that threw").isEqualTo(1);
    } finally {
      first.countDown();
      callerRuns.shutdownNow();
    }
  }

  /**
   * Review h-attack19: on such a pool, each task handed over from a finishing task's thread ran nested inside the
   * previous one's {@code execute}, so the stack grew with every waiting task: a moved shard of thousands of
   * resources ends in a {@code StackOverflowError}. Each now runs at the same depth, and each once.
   */
  @Test
  void onACallerRunsPoolTheWaitingTasksDoNotNestOnTheStack() throws InterruptedException {
    ThreadPoolExecutor callerRuns = callerRunsHandOff();
    LaneExecutor lanes = new LaneExecutor(callerRuns, 50);
    CountDownLatch first = new CountDownLatch(1);
    int count = 500;
    int[] depths = new int[count];
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch ran = new CountDownLatch(count);
    try {
      lanes.execute(() -> {
        try {
          first.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      lanes.moving(() -> {
        for (int i = 0; i < count; i++) {
          int index = i;
          lanes.execute(() -> {
            depths[index] = Thread.currentThread().getStackTrace().length;
            runs.incrementAndGet();
            ran.countDown();
          });
        }
        return count;
      });
      first.countDown();
      assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
      lanes.shutdown();
      assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      assertThat(runs.get()).isEqualTo(count);
      assertThat(depths[count - 1] - depths[0]).as("stack frames gained from the first waiting task to the last")
          .isLessThan(20);
    } finally {
      first.countDown();
      callerRuns.shutdownNow();
    }
  }

  @Test
  void onARealPoolATaskThatThrowsLeaksNoThreadAndTheRestRun() throws InterruptedException {
    ExecutorService real = Executors.newFixedThreadPool(1);
    LaneExecutor lanes = new LaneExecutor(real, 50);
    CountDownLatch ran = new CountDownLatch(3);
    lanes.execute(() -> {
      ran.countDown();
      throw new AssertionError("a task's Error, on a pool thread");
    });
    lanes.moving(() -> {
      lanes.execute(ran::countDown);
      lanes.execute(ran::countDown);
      return 2;
    });
    assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
    lanes.shutdown();
    assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    assertThat(real.isTerminated()).isTrue();
  }
  /**
   * A task handed over while {@code shutdownNow()} runs, which the pool refuses (its freed thread not back yet) just
   * before that call shuts the pool down, is one {@code execute} accepted: {@code shutdownNow()} must return it, or it
   * must run (interrupted, as the pool's own would be). It may not wait in its lane after termination, where nothing
   * feeds it any more and nothing returns it.
   */
  @Test
  void aTaskThePoolRefusesWhileShutdownNowRunsIsReturnedOrRun() throws InterruptedException {
    CountDownLatch handing = new CountDownLatch(1);
    CountDownLatch stopping = new CountDownLatch(1);
    CountDownLatch looked = new CountDownLatch(1);
    Thread[] informer = new Thread[1];
    ExecutorService notBackYet = new AbstractExecutorService() {
      private volatile boolean shut;

      @Override
      public void execute(Runnable task) {
        if (shut) {
          throw new RejectedExecutionException("shut down");
        }
        handing.countDown();
        awaitUninterruptibly(stopping); // shutdownNow() began: its flags are set, its lanes drained
        throw new RejectedExecutionException("no thread back in the pool yet");
      }

      @Override
      public boolean isShutdown() {
        boolean seen = shut;
        if (Thread.currentThread() == informer[0] && stopping.getCount() == 0) {
          looked.countDown(); // the refused hand looked: the pool was not shut down yet
        }
        return seen;
      }

      @Override
      public List<Runnable> shutdownNow() {
        stopping.countDown();
        awaitUninterruptibly(looked);
        shut = true;
        return List.of();
      }

      @Override
      public void shutdown() {
        shut = true;
      }

      @Override
      public boolean isTerminated() {
        return shut;
      }

      @Override
      public boolean awaitTermination(long timeout, TimeUnit unit) {
        return shut;
      }
    };
    LaneExecutor lanes = new LaneExecutor(notBackYet, 1);
    Runnable reconciliation = task("o1");
    informer[0] = new Thread(() -> lanes.execute(reconciliation));
    informer[0].start();
    assertThat(handing.await(30, TimeUnit.SECONDS)).as("o1 handed to the pool").isTrue();
    List<Runnable> returned = lanes.shutdownNow();
    informer[0].join();
    assertThat(lanes.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    assertThat(returned.contains(reconciliation) || ran.contains("o1"))
        .as("o1 returned by shutdownNow() %s or run %s; waiting in its lane after termination: %s", returned, ran,
            lanes.waiting())
        .isTrue();
  }

  /**
   * While the pool refuses every hand-over for a while (its threads taken by other work: a pool shared with it, or one
   * that cannot start a thread), the tasks submitted meanwhile wait in their lanes and are handed over again, sooner
   * first, then every 64 ms: one retry at a time, as a sharded runner's own lanes are retried (ShardListeners,
   * RunnerCallbacks), not one more chain of retries for each task submitted, each polling the pool 15 times a second
   * for as long as it refuses. Once the pool takes them, every task runs once and the retries end.
   */
  @Test
  void whileThePoolRefusesTheWaitingTasksAreHandedOverAgainByOneRetryNotOnePerSubmit() throws InterruptedException {
    ExecutorService threads = Executors.newFixedThreadPool(4);
    AtomicInteger retried = new AtomicInteger();
    Thread submitter = Thread.currentThread();
    boolean[] full = {true};
    ExecutorService shared = new AbstractExecutorService() {
      @Override
      public void execute(Runnable task) {
        synchronized (full) {
          if (full[0]) {
            if (Thread.currentThread() != submitter) {
              retried.incrementAndGet();
            }
            throw new RejectedExecutionException("every thread taken by other work");
          }
        }
        threads.execute(task);
      }

      @Override
      public void shutdown() {
        threads.shutdown();
      }

      @Override
      public List<Runnable> shutdownNow() {
        return threads.shutdownNow();
      }

      @Override
      public boolean isShutdown() {
        return threads.isShutdown();
      }

      @Override
      public boolean isTerminated() {
        return threads.isTerminated();
      }

      @Override
      public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return threads.awaitTermination(timeout, unit);
      }
    };
    LaneExecutor lanes = new LaneExecutor(shared, 4);
    AtomicInteger ranOnce = new AtomicInteger();
    try {
      for (int i = 0; i < 100; i++) {
        lanes.execute(ranOnce::incrementAndGet); // an informer's event each, while the pool refuses
      }
      assertThat(Await.holds(() -> retried.get() >= 300, java.time.Duration.ofSeconds(2)))
          .as("300 hand-overs retried within 2 s while the pool refuses (one retry every 64 ms makes about 30)")
          .isFalse();
      synchronized (full) {
        full[0] = false;
      }
      Await.until("the 100 tasks ran once the pool took them", () -> ranOnce.get() == 100);
      assertThat(lanes.waiting()).isZero();
    } finally {
      synchronized (full) {
        full[0] = false;
      }
      lanes.shutdownNow();
      threads.shutdownNow();
    }
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        latch.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
