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
 * The hand-over pool's spill to the elastic workers ({@code SharedPools.elastic(max, prefix, spill, timer)}),
 * from the adversarial review h-attack5 of commit ac2c439.
 */
class HandOverSpillTest {

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
