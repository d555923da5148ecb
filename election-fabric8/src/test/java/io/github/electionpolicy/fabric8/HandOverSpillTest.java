package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The hand-over pool's spill to the elastic workers ({@code SharedPools.elastic(max, prefix, spill, timer)}): it
 * spills what waits once the pool's threads are stuck, never while they are merely busy (checked in a time the test
 * sets, on a timer it fires); and the findings of the adversarial review h-attack5 of commit ac2c439.
 */
class HandOverSpillTest {

  /** A loop whose timers run only when the test fires them, in a time the test advances. */
  private static final class ManualTimer implements RunnerLoop {
    final java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();
    final java.util.List<long[]> dueAt = new java.util.concurrent.CopyOnWriteArrayList<>();
    final java.util.List<Runnable> tasks = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public void execute(Runnable task) {
      task.run();
    }

    @Override
    public Timer schedule(long delayNanos, Runnable task) {
      dueAt.add(new long[] {now.get() + delayNanos});
      tasks.add(task);
      return () -> { };
    }

    @Override
    public boolean inLoop() {
      return false;
    }

    /** Advances the time by {@code millis} and runs every timer due by then, including those they schedule. */
    void advance(long millis) {
      now.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
      for (int i = 0; i < tasks.size(); i++) {
        if (dueAt.get(i)[0] <= now.get() && dueAt.get(i)[0] != Long.MAX_VALUE) {
          dueAt.get(i)[0] = Long.MAX_VALUE;
          tasks.get(i).run();
        }
      }
    }
  }

  /**
   * A burst on a loaded machine: the hand-over threads are busy, each task waits longer than the spill period for
   * a thread, but the threads keep taking tasks; spilling would only add threads that compete for the same CPU. A
   * variant that spills what has waited a period, whatever the threads do (as the pool did before), fails here.
   * Then the same pool with its thread stuck: what waits is spilled once a period has passed without progress.
   */
  @Test
  void busyThreadsKeepTheirQueueAndStuckOnesSpillIt() throws Exception {
    ManualTimer timer = new ManualTimer();
    java.util.List<Runnable> spilled = new java.util.concurrent.CopyOnWriteArrayList<>();
    ThreadPoolExecutor pool = SharedPools.elastic(1, "test-handover-", spilled::add, () -> timer,
        timer.now::get);
    try {
      // One thread; each task holds it until the test lets it go, so the test decides when the thread progresses.
      java.util.List<CountDownLatch> release = new java.util.ArrayList<>();
      java.util.List<CountDownLatch> started = new java.util.ArrayList<>();
      for (int i = 0; i < 4; i++) {
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch began = new CountDownLatch(1);
        release.add(go);
        started.add(began);
        pool.execute(() -> {
          began.countDown();
          try {
            go.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
      }
      assertThat(started.get(0).await(20, TimeUnit.SECONDS)).isTrue();
      // Tasks 1..3 wait. Every 60 ms of the test's time the thread finishes one task and takes the next: no
      // spill period (100 ms) passes without progress, though task 3 waits 180 ms.
      for (int i = 0; i < 3; i++) {
        timer.advance(60);
        release.get(i).countDown();
        assertThat(started.get(i + 1).await(20, TimeUnit.SECONDS)).isTrue();
        // The thread took the next task at some real moment; its progress is read from the test's time, so it
        // counts as taken now.
      }
      timer.advance(60);
      assertThat(spilled).as("nothing spilled while the thread kept taking tasks").isEmpty();

      // Now the thread is stuck in task 3, and one more task waits: after a period without progress it spills.
      pool.execute(() -> { });
      timer.advance(60);
      assertThat(spilled).as("less than a period without progress").isEmpty();
      timer.advance(60);
      assertThat(spilled).as("a period without progress: what waits runs elsewhere").hasSize(1);
      release.get(3).countDown();
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * The user-code pool's spill is bounded in time instead: a callback that waited a period runs elsewhere even
   * while the pool's threads progress, since a service's {@code stop()} that waits counts against the Lease's
   * deadline. A variant that spills only stuck threads' queues (the hand-over pool's rule) fails here.
   */
  @Test
  void userCodeThatWaitedAPeriodRunsElsewhereEvenWhileTheThreadsProgress() throws Exception {
    ManualTimer timer = new ManualTimer();
    java.util.List<Runnable> spilled = new java.util.concurrent.CopyOnWriteArrayList<>();
    ThreadPoolExecutor pool = SharedPools.elastic(1, SharedPools.threadFactory("test-user-"), spilled::add,
        () -> timer, timer.now::get, false);
    CountDownLatch first = new CountDownLatch(1);
    CountDownLatch second = new CountDownLatch(1);
    CountDownLatch secondStarted = new CountDownLatch(1);
    try {
      pool.execute(() -> await(first));
      pool.execute(() -> {
        secondStarted.countDown();
        await(second);
      });
      pool.execute(() -> { }); // waits behind both
      timer.advance(60);
      first.countDown(); // the thread progresses: it takes the second task
      assertThat(secondStarted.await(20, TimeUnit.SECONDS)).isTrue();
      timer.advance(60);
      assertThat(spilled).as("the third waited a period: it runs elsewhere though the thread progressed")
          .hasSize(1);
    } finally {
      second.countDown();
      pool.shutdownNow();
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(20, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * FINDING 1 (h-attack5). When the spill finds no thread to spill to (the elastic workers' pool cannot start a
   * thread for a moment: "unable to create native thread" at a peak of threads), it puts the task back in the queue
   * and clears {@code spillDue}, but schedules no further spill: the task then waits for the pool's own threads only.
   * If those are held by interceptors that never return (the very case the spill exists for), the task is never run,
   * although the elastic workers can start threads again a moment later, unless some other task happens to be queued
   * after it. That contradicts the pool's Javadoc ("A task is never left behind threads that do not come back").
   * Here: one hand-over thread, held; a second task queued; the spill's executor refuses once, then works.
   */
  @Test
  void aTaskPutBackByAFailedSpillIsSpilledAgainOnceThereIsAThread() throws Exception {
    AtomicInteger spillAttempts = new AtomicInteger();
    Executor spill = task -> {
      if (spillAttempts.incrementAndGet() == 1) {
        throw new RejectedExecutionException("no thread could be started (once)");
      }
      Thread t = new Thread(task, "test-spilled");
      t.setDaemon(true);
      t.start();
    };
    ThreadPoolExecutor pool = SharedPools.elastic(1, "test-handover-", spill, RunnerLoop::shared);
    CountDownLatch unhang = new CountDownLatch(1);
    CountDownLatch hung = new CountDownLatch(1);
    AtomicBoolean ran = new AtomicBoolean();
    try {
      pool.execute(() -> {
        hung.countDown();
        try {
          unhang.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      assertThat(hung.await(20, TimeUnit.SECONDS)).isTrue();
      pool.execute(() -> ran.set(true));

      assertThat(Await.holds(() -> spillAttempts.get() >= 1, Duration.ofSeconds(20)))
          .as("the first spill was tried (and refused)").isTrue();
      // Many spill periods (SPILL_MILLIS = 100 ms): a second spill, with a thread to spill to now, runs the task.
      assertThat(Await.holds(ran::get, Duration.ofSeconds(20)))
          .as("the task put back by the refused spill runs, while the pool's only thread is held")
          .isTrue();
    } finally {
      unhang.countDown();
      pool.shutdownNow();
    }
  }

  /**
   * FINDING 3 (h-attack5), narrow. The rejection handler queues the task first and only then, finding no thread in
   * the pool, starts one ({@code setCorePoolSize(1); prestartCoreThread(); setCorePoolSize(0)}). If that start
   * throws (an {@link OutOfMemoryError} "unable to create native thread"), the Error leaves {@code execute} after the
   * task was queued: {@code handOverTo} turns it into a {@link RejectedExecutionException}, so the caller takes the
   * hand-over as refused, yet the queued task still runs later. A Lease call is guarded (its refusal ends the call,
   * the late task's {@code call.send()} then finds it dropped and sends nothing); an Event write is not: it is
   * logged "not recorded" and its place in the Event-writes bound given back, and then it is written anyway,
   * outside that bound. The core size also stays 1, so one hand-over thread never retires. In production the handler sees an empty
   * pool only in a race (every thread retired between the refusal and the queueing), so the thread factory here
   * forces it: its first thread cannot be made (null: the refusal at size 0), its second start fails with the Error.
   */
  @Test
  void aHandOverRefusedToItsCallerIsNeverRunLater() throws Exception {
    ThreadPoolExecutor pool = SharedPools.elastic(1, "test-handover-", task -> { }, RunnerLoop::shared);
    AtomicInteger made = new AtomicInteger();
    pool.setThreadFactory(task -> {
      int n = made.incrementAndGet();
      if (n == 1) {
        return null;
      }
      if (n == 2) {
        throw new OutOfMemoryError("unable to create native thread (test)");
      }
      Thread t = new Thread(task, "test-handover-" + n);
      t.setDaemon(true);
      return t;
    });
    AtomicBoolean ran = new AtomicBoolean();
    boolean refused = false;
    try {
      try {
        SharedPools.handOverTo(pool).execute(() -> ran.set(true));
      } catch (RejectedExecutionException e) {
        refused = true;
      }
      assertThat(refused).as("the caller was told the hand-over was refused").isTrue();
      // Threads can be made again: a later hand-over starts one, which also finds the queued task.
      SharedPools.handOverTo(pool).execute(() -> { });
      assertThat(Await.holds(ran::get, Duration.ofSeconds(2)))
          .as("the refused hand-over ran anyway").isFalse();
      assertThat(pool.getCorePoolSize()).isZero();
    } finally {
      pool.shutdownNow();
    }
  }
}
