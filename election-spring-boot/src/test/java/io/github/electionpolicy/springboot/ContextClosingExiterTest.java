package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.Exiter;
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
  void duringACloseInProgressItReturnsAtOnceWaitsForTheCloseAndStillExits() throws InterruptedException {
    CountDownLatch closing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    GenericApplicationContext context = new GenericApplicationContext();
    context.registerBean("slow", DisposableBean.class, () -> () -> {
      closing.countDown();
      release.await(); // a bean that takes its time to close, as the runner's release does
      events.add("context closed");
    });
    context.refresh();
    Thread shutdownHook = new Thread(context::close, "shutdown-hook");
    shutdownHook.start();
    assertThat(closing.await(Await.DEADLINE.toSeconds(), TimeUnit.SECONDS)).isTrue();

    long before = System.nanoTime();
    new ContextClosingExiter(context, process).exit(1);
    assertThat(System.nanoTime() - before).as("exit() hands the work to a thread of its own")
        .isLessThan(TimeUnit.SECONDS.toNanos(5));
    assertThat(events).isEmpty();

    release.countDown();

    Await.until("the process exit", () -> events.contains("process exit 1"));
    shutdownHook.join(Await.DEADLINE.toMillis());
    assertThat(shutdownHook.isAlive()).isFalse();
    assertThat(events).containsExactly("context closed", "process exit 1");
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
