package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.github.electionpolicy.testsupport.LogCapture;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A runner's log lines are never written on the loop that every runner shares: logged there, they wait on the
 * runner's own lane, in order, bounded; logged elsewhere, they are written at once unless lines of the runner
 * still wait. Driven by hand: the lane's executor runs its task only when the test says so, and the loop is a
 * flag, so no test here waits on a clock.
 */
class RunnerLogTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog services = new ServiceLog();

  /** An executor that runs what it was given only on {@link #runAll()}. */
  private static final class HeldExecutor implements Executor {
    private final ArrayDeque<Runnable> held = new ArrayDeque<>();

    @Override
    public void execute(Runnable task) {
      held.add(task);
    }

    void runAll() {
      Runnable task;
      while ((task = held.poll()) != null) {
        task.run();
      }
    }
  }

  /** A loop that only answers whether the caller runs on it. */
  private static final class FlagLoop implements RunnerLoop {
    boolean inLoop = true;

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
      return inLoop;
    }
  }

  private final FlagLoop loop = new FlagLoop();
  private final HeldExecutor pool = new HeldExecutor();
  private final RunnerLog.Lane lane = new RunnerLog.Lane(loop, pool, "lease:a");
  private final RunnerLog log = new RunnerLog(ElectionRunner.class, lane);

  private static long count(String text, String part) {
    return Arrays.stream(text.split("\n")).filter(line -> line.contains(part)).count();
  }

  @Test
  void aLineLoggedOnTheLoopIsWrittenLaterOnTheRunnersLogLane() {
    try (LogCapture captured = new LogCapture()) {
      log.info("Acquired Lease {} as {}", "ns/lease", "a");

      assertThat(captured.text()).as("nothing written on the loop").doesNotContain("Acquired Lease");
      pool.runAll();
      assertThat(captured.text()).contains("[election-log[lease:a]] INFO")
          .contains("Acquired Lease ns/lease as a");
    }
  }

  @Test
  void aLineLoggedOffTheLoopWithNothingWaitingIsWrittenAtOnceOnTheCallersThread() {
    loop.inLoop = false;
    try (LogCapture captured = new LogCapture()) {
      log.warn("Started {} service(s)", 2);

      assertThat(captured.text()).contains("[" + Thread.currentThread().getName() + "] WARN")
          .contains("Started 2 service(s)");
    }
  }

  @Test
  void aLineLoggedOffTheLoopWaitsBehindTheRunnersLinesThatStillWait() {
    try (LogCapture captured = new LogCapture()) {
      log.info("first, on the loop");
      loop.inLoop = false;
      log.info("second, from a callback");

      assertThat(captured.text()).doesNotContain("second, from a callback");
      pool.runAll();
      String text = captured.text();
      assertThat(text.indexOf("first, on the loop")).isNotNegative()
          .isLessThan(text.indexOf("second, from a callback"));
    }
  }

  @Test
  void theTextIsFormattedOnceWithItsFailureAndNoBraceOfAnArgumentIsAPlaceholderAgain() {
    try (LogCapture captured = new LogCapture()) {
      log.error("Lease loop for {} failed; contention ends", "ns/{}lease", new IllegalStateException("boom"));
      pool.runAll();

      assertThat(captured.text()).contains("ERROR ElectionRunner - Lease loop for ns/{}lease failed; contention ends")
          .contains("java.lang.IllegalStateException: boom");
    }
  }

  @Test
  void pastTheLimitLinesAreDroppedCountedAndSummarisedInOneLine() {
    int over = 7;
    try (LogCapture captured = new LogCapture()) {
      for (int i = 0; i < RunnerLog.Lane.LIMIT + over; i++) {
        log.info("line {}", i);
      }
      assertThat(lane.dropped()).isEqualTo(over);

      pool.runAll();
      String text = captured.text();
      assertThat(count(text, "INFO ElectionRunner - line ")).isEqualTo(RunnerLog.Lane.LIMIT);
      assertThat(text).contains("line " + (RunnerLog.Lane.LIMIT - 1)).doesNotContain("line " + RunnerLog.Lane.LIMIT);
      assertThat(count(text, "Dropped ")).as("one summary line").isOne();
      assertThat(text).contains("WARN ElectionRunner - Dropped " + over + " log line(s) of the runner lease:a: more "
          + "than " + RunnerLog.Lane.LIMIT + " waited for a slow log appender");

      // Caught up: the lane takes lines again, and the next overflow is summarised on its own.
      for (int i = 0; i < RunnerLog.Lane.LIMIT + 1; i++) {
        log.info("again {}", i);
      }
      pool.runAll();
      assertThat(lane.dropped()).isEqualTo(over + 1);
      assertThat(count(captured.text(), "Dropped ")).isEqualTo(2);
      assertThat(captured.text()).contains("Dropped 1 log line(s)");
    }
  }

  @Test
  void aPoolThatRefusesKeepsTheLineAndNeverFailsTheStepThatLoggedIt() {
    java.util.concurrent.atomic.AtomicBoolean refuse = new java.util.concurrent.atomic.AtomicBoolean(true);
    RunnerLog.Lane refused = new RunnerLog.Lane(loop, task -> {
      if (refuse.get()) {
        throw new RejectedExecutionException("no thread");
      }
      task.run();
    }, "lease:a");
    RunnerLog onRefused = new RunnerLog(ElectionRunner.class, refused);
    try (LogCapture captured = new LogCapture()) {
      assertThatCode(() -> onRefused.error("Lost Lease {}", "ns/lease")).doesNotThrowAnyException();
      assertThat(refused.dropped()).as("kept, not dropped").isZero();
      assertThat(captured.text()).doesNotContain("Lost Lease ns/lease");

      refuse.set(false);
      onRefused.info("Following leader {}", "b");

      assertThat(captured.text()).contains("Lost Lease ns/lease");
      assertThat(captured.text().indexOf("Lost Lease ns/lease")).as("in order")
          .isLessThan(captured.text().indexOf("Following leader b"));
    }
  }

  /**
   * FINDING 4 (h-attack2). A line the pool refused is handed over again only by the runner's next line; the lines
   * a runner logs last ("Stopped a (CLOSED)", the ERROR of a hung stop) have no next line, so they were never
   * written, even once threads could be had again, and whoever waited for them (close(), awaitStopped(), the
   * exiter) waited its whole bound (the stop timeout) first. The waiter hands the lane over again itself.
   */
  @Test
  void theLastLinesThePoolRefusedAreWrittenOnceAThreadCanBeHadWithoutANextLine() throws InterruptedException {
    java.util.concurrent.atomic.AtomicBoolean refuse = new java.util.concurrent.atomic.AtomicBoolean(true);
    RunnerLog.Lane refused = new RunnerLog.Lane(loop, task -> {
      if (refuse.get()) {
        throw new RejectedExecutionException("no thread");
      }
      task.run();
    }, "lease:a");
    RunnerLog onRefused = new RunnerLog(ElectionRunner.class, refused);
    try (LogCapture captured = new LogCapture()) {
      onRefused.info("Stopped {} ({})", "a", "CLOSED");
      refuse.set(false);

      // As close() waits, bounded by the stop timeout: the pool takes work again, and no line follows.
      assertThat(refused.awaitWritten(Duration.ofSeconds(20).toNanos())).as("written, not waited out").isTrue();
      assertThat(captured.text()).contains("Stopped a (CLOSED)");
    }
  }

  @Test
  void aDisabledLevelIsNeitherFormattedNorQueued() {
    log.debug("Lease {}: {}", "ns/lease", "still unreachable");

    assertThat(pool.held).as("DEBUG is off in the tests' binding").isEmpty();
  }

  @Test
  void noLineOfAnElectionIsWrittenOnTheSharedLoopThread() throws Exception {
    String text;
    try (LogCapture captured = new LogCapture()) {
      ElectionRunner a = ElectionRunner.builder()
          .client(api.client())
          .decision(MockApi.CONTEND)
          .settings(MockApi.fastSettings("a").build())
          .service(services.service("a"))
          .start();
      try {
        assertThat(services.await("a", ServiceLog.Kind.START, 0, Duration.ofSeconds(5))).isPresent();
      } finally {
        a.close();
      }
      // close() returns once the lines until STOPPED are written.
      text = captured.text();
    }
    assertThat(text).contains("Acquired Lease " + MockApi.NAMESPACE + "/" + MockApi.LEASE + " as a")
        .contains("Released Lease " + MockApi.NAMESPACE + "/" + MockApi.LEASE)
        .contains("Stopped a (CLOSED)")
        .doesNotContain("[election-loop]");
  }
}
