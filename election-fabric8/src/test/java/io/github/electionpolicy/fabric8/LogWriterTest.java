package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.LogCapture;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The JVM's log writer ({@code SharedPools.logWriter()}: an elastic pool of one thread that spills what waits when
 * that thread is stuck, see {@code LogWriterIsolationTest}): while it keeps up, every runner's lines are written by
 * that one thread, each runner's in order, however many runners have lines waiting. Before, each runner's lane took
 * a worker of its own, and a burst of warnings from 1,000 runners kept dozens of workers. The writer here is the
 * same construction as production's, on a timer the test never fires (so nothing spills); it waits only for
 * latches its tasks count down.
 */
class LogWriterTest {

  @Test
  void productionRunnersWriteTheirLinesThroughTheSharedWriter() {
    assertThat(RunnerLoop.shared().logWriter()).isSameAs(SharedPools.logWriter());
  }

  @Test
  void manyRunnersLinesAreWrittenByOneThreadEachRunnersInOrder() throws Exception {
    HandLoop timer = new HandLoop(false);
    List<Runnable> spilled = new CopyOnWriteArrayList<>();
    ThreadPoolExecutor writer = SharedPools.elastic(1, SharedPools.threadFactory("test-log-"), spilled::add,
        () -> timer, System::nanoTime, true);
    try {
      AtomicInteger writing = new AtomicInteger();
      AtomicInteger mostAtOnce = new AtomicInteger();
      CountDownLatch firstHeld = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      int runners = 50;
      int linesEach = 3;
      CountDownLatch written = new CountDownLatch(runners * linesEach);
      List<List<Integer>> order = new ArrayList<>();
      List<CallbackLane> lanes = new ArrayList<>();
      for (int i = 0; i < runners; i++) {
        lanes.add(new CallbackLane(writer, "election-log[lease-" + i + ":a]", this));
        order.add(new CopyOnWriteArrayList<>());
      }
      for (int line = 0; line < linesEach; line++) {
        for (int i = 0; i < runners; i++) {
          int runner = i;
          int n = line;
          lanes.get(i).submit(() -> {
            mostAtOnce.accumulateAndGet(writing.incrementAndGet(), Math::max);
            firstHeld.countDown();
            try {
              release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            order.get(runner).add(n);
            writing.decrementAndGet();
            written.countDown();
          });
        }
      }
      assertThat(firstHeld.await(20, TimeUnit.SECONDS)).isTrue();
      release.countDown();
      assertThat(written.await(20, TimeUnit.SECONDS)).isTrue();
      assertThat(mostAtOnce).hasValue(1);
      assertThat(writer.getLargestPoolSize()).isEqualTo(1);
      assertThat(spilled).isEmpty();
      assertThat(order).allSatisfy(lines -> assertThat(lines).containsExactly(0, 1, 2));
    } finally {
      writer.shutdownNow();
    }
  }

  @Test
  void aLineLoggedOnTheLoopIsWrittenByTheSharedWriterUnderTheRunnersName() throws Exception {
    RunnerLog.Lane lane = new RunnerLog.Lane(new HandLoop(true), SharedPools.logWriter(), "lease:a");
    RunnerLog log = new RunnerLog(ElectionRunner.class, lane);
    try (LogCapture captured = new LogCapture()) {
      log.info("first {}", 1);
      log.info("second {}", 2);
      assertThat(lane.awaitWritten(TimeUnit.SECONDS.toNanos(20))).isTrue();
      String text = captured.text();
      assertThat(text).contains("[election-log[lease:a]] INFO", "first 1", "second 2");
      assertThat(text.indexOf("first 1")).isLessThan(text.indexOf("second 2"));
    }
  }

  /**
   * A loop that never runs a task nor fires a timer (nothing spills), and tells whether the caller runs on it:
   * {@code inLoop} true sends every line through the lane, as a line logged on the loop.
   */
  private record HandLoop(boolean inLoop) implements RunnerLoop {
    @Override
    public void execute(Runnable task) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Timer schedule(long delayNanos, Runnable task) {
      return () -> { };
    }
  }
}
