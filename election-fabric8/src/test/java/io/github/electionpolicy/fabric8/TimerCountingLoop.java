package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The shared loop, seen through the timers a runner schedules on it: it keeps those that neither ran nor were
 * cancelled. A runner that still lives always has one (its next attempt, renewal or request deadline), between any
 * two of its tasks; so a stopped runner whose timers are all gone, judged on the loop between tasks, can send
 * nothing more. That turns "nothing is sent for a while after the stop" into a condition a test can wait for.
 */
final class TimerCountingLoop implements RunnerLoop {
  private final RunnerLoop shared = RunnerLoop.shared();
  final Set<Object> pending = ConcurrentHashMap.newKeySet();

  @Override
  public void execute(Runnable task) {
    shared.execute(task);
  }

  @Override
  public Timer schedule(long delayNanos, Runnable task) {
    Object key = new Object();
    pending.add(key);
    Timer timer = shared.schedule(delayNanos, () -> {
      pending.remove(key);
      task.run();
    });
    return () -> {
      pending.remove(key);
      timer.cancel();
    };
  }

  @Override
  public boolean inLoop() {
    return shared.inLoop();
  }

  /** Waits until the tasks queued before this call ran (from any thread but the loop's). */
  void drain() throws InterruptedException {
    CountDownLatch ran = new CountDownLatch(1);
    shared.execute(ran::countDown);
    assertThat(ran.await(10, TimeUnit.SECONDS)).as("the loop ran the tasks queued before").isTrue();
  }

  /**
   * Waits up to {@code patience} until no timer of this loop's runners is pending, judged on the loop between
   * tasks (a timer that runs and schedules the next one is never seen as none); whether it came to that.
   */
  boolean awaitNoTimers(Duration patience) throws InterruptedException {
    return Await.holds(() -> {
      boolean[] none = new boolean[1];
      CountDownLatch judged = new CountDownLatch(1);
      shared.execute(() -> {
        none[0] = pending.isEmpty();
        judged.countDown();
      });
      try {
        return judged.await(10, TimeUnit.SECONDS) && none[0];
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }, patience);
  }
}
