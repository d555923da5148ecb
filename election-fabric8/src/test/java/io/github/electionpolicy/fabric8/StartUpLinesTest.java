package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A contending {@code start()} begins the election before it writes its own lines (the decision, "Contending for
 * Lease"), so that the first read is on the way while the caller's appender works; the runner's own lines are
 * held meanwhile, so the log still reads in the order things were decided. Here the caller's "Contending" line is
 * held in its appender until the runner leads and the log writer has written everything handed to it: the
 * runner's "Acquired" line must still come after it. Without the hold the writer writes "Acquired" first.
 */
class StartUpLinesTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  @Test
  void theCallersLinesComeBeforeTheRunnersOwnEvenWhenTheRunnerLeadsWhileTheyAreWritten() throws Exception {
    CountDownLatch leading = new CountDownLatch(1);
    Thread caller = Thread.currentThread();
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    OutputStream tee = new OutputStream() {
      @Override
      public void write(int b) {
        write(new byte[] {(byte) b}, 0, 1);
      }

      @Override
      public void write(byte[] b, int off, int len) {
        String text = new String(b, off, len, StandardCharsets.UTF_8);
        if (Thread.currentThread() == caller && text.contains("Contending for Lease")) {
          // The runner leads while the caller is still writing its line, and the writer writes all it was given.
          awaitQuietly(leading);
          ThreadPoolExecutor writer = (ThreadPoolExecutor) SharedPools.logWriter();
          Await.until("the log writer idle", () -> writer.getActiveCount() == 0 && writer.getQueue().isEmpty());
        }
        original.write(b, off, len);
        synchronized (captured) {
          captured.write(b, off, len);
        }
      }
    };
    System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
    ElectionRunner runner;
    try {
      runner = ElectionRunner.builder()
          .client(api.client())
          .decision(MockApi.CONTEND)
          .settings(MockApi.fastSettings("a").build())
          .service(LeaderService.of(term -> { }, () -> { }))
          .listener(new ElectionListener() {
            @Override
            public void stateChanged(ElectionState previous, ElectionState current) {
              if (current instanceof ElectionState.Leading) {
                leading.countDown();
              }
            }
          })
          .start();
      try {
        Await.until("the Acquired line", () -> text(captured).contains("Acquired Lease"));
      } finally {
        runner.close();
      }
    } finally {
      System.setErr(original);
    }
    String log = text(captured);
    int decision = log.indexOf("reasons=");
    int contending = log.indexOf("Contending for Lease " + MockApi.NAMESPACE);
    int acquired = log.indexOf("Acquired Lease");
    assertThat(contending).as("the Contending line in:%n%s", log).isNotNegative();
    assertThat(acquired).as("the runner's Acquired line after the caller's Contending line in:%n%s", log)
        .isGreaterThan(contending);
    assertThat(decision).as("the decision's line first in:%n%s", log).isNotNegative().isLessThan(contending);
  }

  private static String text(ByteArrayOutputStream captured) {
    synchronized (captured) {
      return captured.toString(StandardCharsets.UTF_8);
    }
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(Await.GENEROUS.toSeconds(), TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
