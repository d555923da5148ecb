package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Finding 2 (h-attack6): one runner's appender that hangs holds every runner's log lines, and so every runner's
 * {@code close()} and {@code awaitStopped()} for its whole stop timeout.
 *
 * <p><b>The bug.</b> Every runner's log lane ({@link RunnerLog.Lane}, a {@link CallbackLane}) now drains on the
 * JVM's one {@code SharedPools.logWriter()}, then a {@code SharedPools.Serial} (removed since): one lane's run at a time, on one
 * worker, with nothing that notices the writer is stuck. A line whose appender hangs (a file appender on a hung
 * mount, a network appender, a sifting appender that routes one runner's lines by MDC to a sink that blocks) holds
 * that one writer, and every other runner's lane waits behind it: their lines are never written (dropped past
 * {@code Lane.LIMIT}), and each waiter for them ({@code RunnerCallbacks.awaitLogWritten}, i.e. {@code close()},
 * {@code awaitStopped()}, the exiter's wait before {@code System.exit}) waits its whole bound. Before this change
 * each lane ran on a worker of its own, so a hung appender held only the runners whose lines reached it. The
 * hand-over pool, which has the same one-stuck-thread-holds-everyone shape, spills what waits once its threads
 * made no progress for {@code SPILL_MILLIS}; the log writer has no such escape.
 *
 * <p><b>The scenario.</b> Two runners' lanes on the production writer: runner A's line hangs in its appender
 * (held on a latch, let go at the end); runner B's line is handed over after it. B's lines should be written
 * while A's appender hangs; they are not.
 *
 * <p><b>Suggested fix.</b> Make the log writer an {@code SharedPools.elastic} pool of one thread that spills when
 * stuck ({@code elastic(1, WORKER_THREADS, WORKERS, RunnerLoop::shared, System::nanoTime, true)}): one writer
 * while it progresses, as now; the waiting lanes go to the workers once it has taken or finished no lane for
 * {@code SPILL_MILLIS}. Each runner's lines stay in order (a lane runs one run at a time, wherever it runs); only
 * the order between runners, which nothing needs, is given up while the writer is stuck.
 */
class LogWriterIsolationTest {

  @Test
  void aHungAppenderOfOneRunnerDoesNotHoldAnotherRunnersLines() throws Exception {
    CountDownLatch hanging = new CountDownLatch(1);
    CountDownLatch letGo = new CountDownLatch(1);
    CallbackLane runnerA = new CallbackLane(SharedPools.logWriter(), "election-log[lease-a:a]", this);
    CallbackLane runnerB = new CallbackLane(SharedPools.logWriter(), "election-log[lease-b:b]", this);
    try {
      runnerA.submit(() -> {
        hanging.countDown();
        try {
          letGo.await(60, TimeUnit.SECONDS); // an appender that hangs
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      assertThat(hanging.await(20, TimeUnit.SECONDS)).as("runner A's appender hangs").isTrue();
      CountDownLatch writtenB = new CountDownLatch(1);
      runnerB.submit(writtenB::countDown);
      assertThat(writtenB.await(20, TimeUnit.SECONDS))
          .as("runner B's line is written although runner A's appender hangs").isTrue();
      assertThat(runnerB.awaitIdle(TimeUnit.SECONDS.toNanos(20)))
          .as("so runner B's close() does not wait for runner A's appender").isTrue();
    } finally {
      letGo.countDown();
      runnerA.awaitIdle(TimeUnit.SECONDS.toNanos(20));
      runnerB.awaitIdle(TimeUnit.SECONDS.toNanos(20));
    }
  }
}
