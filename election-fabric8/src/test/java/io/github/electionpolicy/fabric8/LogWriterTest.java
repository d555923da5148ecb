package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.testsupport.LogCapture;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A serial writer ({@code SharedPools.Serial} over the workers; the JVM's {@code SharedPools.logWriter()} is now an
 * elastic pool of one thread that spills when stuck, see {@code LogWriterIsolationTest}): every
 * runner's lines, one at a time, in order, on one thread at a time, however many runners have lines waiting; a
 * writer that cannot start a thread keeps nothing, so a runner's lane keeps its lines for a retry. Driven by hand
 * where the order matters; where threads run, the test waits only for latches its tasks count down.
 */
class LogWriterTest {

  /** Runs what it was given only on {@link #runAll()}; refuses while {@link #refusing} is set. */
  private static final class HeldExecutor implements Executor {
    private final ArrayDeque<Runnable> held = new ArrayDeque<>();
    boolean refusing;
    int started;

    @Override
    public void execute(Runnable task) {
      if (refusing) {
        throw new OutOfMemoryError("simulated: unable to create native thread");
      }
      started++;
      held.add(task);
    }

    void runAll() {
      Runnable task;
      while ((task = held.poll()) != null) {
        task.run();
      }
    }
  }

  @Test
  void tasksRunInTheOrderGivenOnOneDrainAtATime() {
    HeldExecutor workers = new HeldExecutor();
    SharedPools.Serial serial = new SharedPools.Serial(workers);
    List<Integer> ran = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      int n = i;
      serial.execute(() -> ran.add(n));
    }
    assertThat(workers.started).as("one drain for everything that waits").isEqualTo(1);
    workers.runAll();
    assertThat(ran).containsExactly(0, 1, 2, 3, 4);
    serial.execute(() -> ran.add(5));
    assertThat(workers.started).as("a new drain once the last one ended").isEqualTo(2);
    workers.runAll();
    assertThat(ran).containsExactly(0, 1, 2, 3, 4, 5);
  }

  @Test
  void aTaskThatFailsDoesNotStrandTheOnesBehindIt() {
    HeldExecutor workers = new HeldExecutor();
    SharedPools.Serial serial = new SharedPools.Serial(workers);
    List<String> ran = new ArrayList<>();
    serial.execute(() -> {
      throw new IllegalStateException("an appender that throws");
    });
    serial.execute(() -> ran.add("after"));
    try (LogCapture ignored = new LogCapture()) {
      workers.runAll();
    }
    assertThat(ran).containsExactly("after");
  }

  @Test
  void aWriterThatCannotStartAThreadRefusesAndKeepsNothingSoTheLaneRetriesItsLines() {
    HeldExecutor workers = new HeldExecutor();
    SharedPools.Serial serial = new SharedPools.Serial(workers);
    List<String> ran = new ArrayList<>();
    workers.refusing = true;
    assertThatThrownBy(() -> serial.execute(() -> ran.add("refused")))
        .isInstanceOf(RejectedExecutionException.class);
    workers.refusing = false;
    serial.execute(() -> ran.add("next"));
    workers.runAll();
    assertThat(ran).as("the refused task was not kept: its caller keeps it").containsExactly("next");

    // Through a runner's lane, as production runs it: the lane keeps the refused line and writes it, in order,
    // once a thread can be had again.
    RunnerLog.Lane lane = new RunnerLog.Lane(new OnTheLoop(), serial, "lease:a");
    RunnerLog log = new RunnerLog(ElectionRunner.class, lane);
    try (LogCapture captured = new LogCapture()) {
      workers.refusing = true;
      log.info("first {}", 1);
      workers.refusing = false;
      log.info("second {}", 2);
      workers.runAll();
      String text = captured.text();
      assertThat(text).contains("first 1", "second 2");
      assertThat(text.indexOf("first 1")).isLessThan(text.indexOf("second 2"));
    }
  }

  /**
   * Many runners with lines waiting, and an appender that holds each line until the test lets it go: one thread
   * writes, the others' lines wait in their lanes. Before the shared writer each runner's lane took a worker of
   * its own, and a burst of warnings from 1,000 runners kept dozens of workers.
   */
  @Test
  void manyRunnersLinesAreWrittenByOneThreadAtATime() throws Exception {
    ExecutorService workers = Executors.newCachedThreadPool();
    try {
      SharedPools.Serial serial = new SharedPools.Serial(workers);
      AtomicInteger writing = new AtomicInteger();
      AtomicInteger mostAtOnce = new AtomicInteger();
      List<String> threads = new CopyOnWriteArrayList<>();
      CountDownLatch firstHeld = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      int runners = 50;
      CountDownLatch written = new CountDownLatch(runners);
      List<CallbackLane> lanes = new ArrayList<>();
      for (int i = 0; i < runners; i++) {
        lanes.add(new CallbackLane(serial, "election-log[lease-" + i + ":a]", this));
      }
      for (CallbackLane lane : lanes) {
        lane.submit(() -> {
          int now = writing.incrementAndGet();
          mostAtOnce.accumulateAndGet(now, Math::max);
          threads.add(Thread.currentThread().getName());
          firstHeld.countDown();
          try {
            release.await(20, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          writing.decrementAndGet();
          written.countDown();
        });
      }
      assertThat(firstHeld.await(20, TimeUnit.SECONDS)).isTrue();
      release.countDown();
      assertThat(written.await(20, TimeUnit.SECONDS)).isTrue();
      assertThat(mostAtOnce).hasValue(1);
      assertThat(((java.util.concurrent.ThreadPoolExecutor) workers).getLargestPoolSize()).isEqualTo(1);
      assertThat(threads).hasSize(runners);
    } finally {
      workers.shutdownNow();
    }
  }

  @Test
  void productionRunnersWriteTheirLinesThroughTheSharedWriter() {
    assertThat(RunnerLoop.shared().logWriter()).isSameAs(SharedPools.logWriter());
  }

  /** A loop the caller always runs on: every line goes through the lane, as a line logged on the loop does. */
  private static final class OnTheLoop implements RunnerLoop {
    @Override
    public void execute(Runnable task) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Timer schedule(long delayNanos, Runnable task) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean inLoop() {
      return true; // lines go through the lane, as lines logged on the loop do
    }
  }
}
