package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * close()'s Javadoc and docs/fabric8.md: it returns once the log lines until {@code STOPPED} are written, "a stuck
 * appender is waited for at most the stop timeout". Review h-close: a close that also waited for the listeners
 * (de704d5, reverted) waited for the log twice, each under a fresh stop-timeout deadline, so a stuck appender held it
 * for two stop timeouts; red there, green here.
 */
class StuckAppenderCloseTest {

  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(3);

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void aStuckAppenderHoldsCloseForOneStopTimeoutAtMost() throws Exception {
    AtomicBoolean stuck = new AtomicBoolean();
    CountDownLatch letGo = new CountDownLatch(1);
    Executor writer = SharedPools.logWriter();
    RunnerLoop shared = RunnerLoop.shared();
    RunnerLoop loop = new RunnerLoop() {
      @Override
      public void execute(Runnable task) {
        shared.execute(task);
      }

      @Override
      public Timer schedule(long delayNanos, Runnable task) {
        return shared.schedule(delayNanos, task);
      }

      @Override
      public boolean inLoop() {
        return shared.inLoop();
      }

      @Override
      public Executor logWriter() {
        // An appender that hangs (a blocked stderr pipe) once stuck is set: the lines after it wait.
        return task -> writer.execute(() -> {
          if (stuck.get()) {
            try {
              letGo.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          task.run();
        });
      }
    };
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").stopTimeout(STOP_TIMEOUT).build())
        .service(log.service("a"))
        .loop(loop)
        .start();
    try {
      assertThat(Await.holds(() -> runner.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(10)))
          .isTrue();
      stuck.set(true);

      long begun = System.nanoTime();
      runner.close();
      Duration took = Duration.ofNanos(System.nanoTime() - begun);

      assertThat(runner.state().kind()).isEqualTo(ElectionState.Kind.STOPPED);
      assertThat(took).as("close() with a stuck appender, stopTimeout=%s", STOP_TIMEOUT)
          .isLessThan(STOP_TIMEOUT.plus(STOP_TIMEOUT.dividedBy(2)));
    } finally {
      letGo.countDown();
    }
  }
}
