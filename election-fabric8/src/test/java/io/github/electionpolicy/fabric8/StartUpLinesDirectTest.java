package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Finding 1 (h-attack8): since 998b655 a contending {@code start()} begins the runner before it writes the
 * decision's line and "Contending for Lease", and the runner's lines are held meanwhile on its lane
 * ({@link RunnerLog.Lane#hold()}), "so the log still reads decision, Contending, then the runner's lines". Only the
 * lines logged through the lane are held: several of the runner's lines go straight to SLF4J from the thread that
 * logs them: "Started N reconciler(s)" and "Stopped N reconciler(s)" ({@code ServiceSequence}, on the services'
 * worker), the preflight's warnings ({@code RbacPreflight}, {@code EventAccess}, on the I/O pool), the preflight
 * deadline's warning. When the runner leads while the caller writes its lines (the scenario of
 * {@link StartUpLinesTest}), "Started 1 reconciler(s)" is written as soon as the caller's appender is free, and the
 * held "Acquired Lease" only after, by the log writer: the log says the services started before it says the Lease
 * was acquired (the runner logged Acquired first: it is logged at the election, on the loop, before the services
 * are even handed to their worker). Before 998b655 nothing was held, so nothing was written out of that order by
 * the start-up lines.
 *
 * <p>Scenario: as {@link StartUpLinesTest}, the caller's "Contending" line is held in its appender until the runner
 * leads and its services' worker waits to write "Started" (blocked on the appender); the log then reads Contending,
 * Started, Acquired.
 *
 * <p>Fixed: {@code ServiceSequence} writes its lines through the runner's {@link RunnerLog} (on its own thread when
 * nothing of the runner waits to be written, as before; after the runner's waiting lines otherwise), so the hold
 * covers them, and "Started" always comes after "Acquired". The preflight's warnings (advice about {@code watch}
 * and events, on the I/O pool, after the verdict) still go straight to SLF4J.
 */
class StartUpLinesDirectTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  @Test
  void theServicesStartedLineComesAfterTheAcquiredLineEvenWhenTheRunnerLeadsWhileTheCallerWrites() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
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
          // The runner leads and its services start while the caller is still writing its line; the services'
          // worker then waits for the appender to write "Started".
          awaitQuietly(started);
          // (With the line on the lane, the worker is done with the runner's callback, and no longer so named.)
          Await.until("the services' worker waiting to write its line, or done", () -> Thread.getAllStackTraces()
              .keySet().stream().filter(t -> t.getName().startsWith("election-services["))
              .allMatch(t -> t.getState() == Thread.State.BLOCKED));
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
          .service(LeaderService.of(term -> started.countDown(), () -> { }))
          .start();
      try {
        Await.until("the Acquired and Started lines", () -> text(captured).contains("Acquired Lease")
            && text(captured).contains("reconciler(s) for"));
      } finally {
        runner.close();
      }
    } finally {
      System.setErr(original);
    }
    String log = text(captured);
    int contending = log.indexOf("Contending for Lease " + MockApi.NAMESPACE);
    int acquired = log.indexOf("Acquired Lease");
    int servicesStarted = log.indexOf("reconciler(s) for");
    assertThat(contending).as("the Contending line in:%n%s", log).isNotNegative();
    assertThat(acquired).as("the Acquired line after Contending in:%n%s", log).isGreaterThan(contending);
    assertThat(servicesStarted).as("the services' Started line after the Acquired line in:%n%s", log)
        .isGreaterThan(acquired);
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
