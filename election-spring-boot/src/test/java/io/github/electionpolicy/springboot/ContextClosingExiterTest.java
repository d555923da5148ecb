package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.Exiter;
import io.github.electionpolicy.testsupport.Await;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.context.support.GenericApplicationContext;

/**
 * The exiter of {@code election.loss-policy=exit}: it returns at once to the runner's thread, closes the context
 * on a thread of its own, and only then ends the process; a close already in progress (a loss during shutdown)
 * is waited for, not deadlocked with.
 */
class ContextClosingExiterTest {

  private final List<String> events = new CopyOnWriteArrayList<>();
  private final Exiter process = status -> events.add("process exit " + status);

  @Test
  void itClosesTheContextThenEndsTheProcessWithTheLossStatus() {
    GenericApplicationContext context = new GenericApplicationContext();
    context.registerBean("closing", DisposableBean.class, () -> () -> events.add("context closed"));
    context.refresh();

    new ContextClosingExiter(context, process).exit(1);

    Await.until("the process exit", () -> events.contains("process exit 1"));
    assertThat(events).containsExactly("context closed", "process exit 1");
    assertThat(context.isActive()).isFalse();
  }

  @Test
  void theLossStatusIsTheExitStatusWhateverTheApplicationsExitCodeGenerators() {
    GenericApplicationContext context = new GenericApplicationContext();
    context.registerBean(ExitCodeGenerator.class, () -> () -> 3);
    context.refresh();

    new ContextClosingExiter(context, process).exit(1);

    Await.until("the process exit", () -> !events.isEmpty());
    assertThat(events).containsExactly("process exit 1");
  }

  @Test
  void duringACloseInProgressItReturnsAtOnceAndNothingDeadlocks() throws InterruptedException {
    CountDownLatch closing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    GenericApplicationContext context = new GenericApplicationContext();
    context.registerBean("slow", DisposableBean.class, () -> () -> {
      closing.countDown();
      // A bean that takes its time to close, as the runner does while it releases the Lease; like the runner's
      // close(), it is not cut short by an interrupt.
      boolean interrupted = false;
      while (true) {
        try {
          release.await();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      events.add("context closed");
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    });
    context.refresh();
    Thread shutdownHook = new Thread(context::close, "shutdown-hook");
    shutdownHook.start();
    assertThat(closing.await(Await.GENEROUS.toSeconds(), TimeUnit.SECONDS)).isTrue();

    long before = System.nanoTime();
    new ContextClosingExiter(context, process).exit(1);
    assertThat(System.nanoTime() - before).as("exit() hands the work to a thread of its own")
        .isLessThan(TimeUnit.SECONDS.toNanos(5));

    release.countDown();

    // Spring waits for the close in progress, or (when the closing thread is blocked, which Spring Framework
    // takes for stuck) returns at once: either way the exit comes, once, and the close completes.
    Await.until("the process exit", () -> events.contains("process exit 1"));
    shutdownHook.join(Await.GENEROUS.toMillis());
    assertThat(shutdownHook.isAlive()).as("the close in progress completed").isFalse();
    assertThat(events).containsExactlyInAnyOrder("context closed", "process exit 1");
  }

  @Test
  void aBeanThatFailsToCloseDoesNotKeepTheProcessAlive() {
    GenericApplicationContext context = new GenericApplicationContext();
    context.registerBean("failing", DisposableBean.class, () -> () -> {
      throw new IllegalStateException("cannot close");
    });
    context.refresh();

    new ContextClosingExiter(context, process).exit(1);

    Await.until("the process exit", () -> events.contains("process exit 1"));
  }
}
