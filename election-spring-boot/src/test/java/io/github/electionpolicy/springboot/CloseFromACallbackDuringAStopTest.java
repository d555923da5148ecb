package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.SpringVersion;

/**
 * One of the runner's own callbacks (a service's {@code stop()}, a listener hearing {@code STOPPED}) closes the context
 * while a {@code stop()} on another thread closes that runner. The context's close calls {@code stop(Runnable)}, which
 * queues Spring's callback behind the stop in progress; Spring's close waits for that callback on the runner's callback
 * thread, and the stop in progress waits for that same callback to return: each waited for the other until one gave up
 * (the stop timeout, or Spring's timeout per shutdown phase). Adversarial review h-review.
 */
class CloseFromACallbackDuringAStopTest {

  /** Hands the callbacks the context, as an application's bean would get it injected. */
  static final class ContextHolder implements ApplicationContextAware {
    final AtomicReference<ConfigurableApplicationContext> context = new AtomicReference<>();

    @Override
    public void setApplicationContext(ApplicationContext applicationContext) {
      context.set((ConfigurableApplicationContext) applicationContext);
    }
  }

  @Test
  void aServiceThatClosesTheContextInItsStopDuringAStopDoesNotStallIt() throws Exception {
    ContextHolder holder = new ContextHolder();
    AtomicBoolean closeOnStop = new AtomicBoolean();
    CompletableFuture<Void> closed = new CompletableFuture<>();
    LeaderService closesTheContext = LeaderService.of(term -> { }, () -> {
      if (closeOnStop.getAndSet(false)) {
        closeAndNote(holder, closed);
      }
    });
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.stop-timeout=20s", Contexts.UNELECTED)
        .withBean(ContextHolder.class, () -> holder)
        .withBean(LeaderService.class, () -> closesTheContext)
        .run(context -> {
          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
          closeOnStop.set(true);
          assertStopIsNotStalled(lifecycle, closed);
        });
  }

  @Test
  void aListenerThatClosesTheContextOnStoppedDuringAStopDoesNotStallIt() throws Exception {
    ContextHolder holder = new ContextHolder();
    AtomicBoolean closeOnStopped = new AtomicBoolean();
    CompletableFuture<Void> closed = new CompletableFuture<>();
    ElectionListener closesTheContext = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED && closeOnStopped.getAndSet(false)) {
          closeAndNote(holder, closed);
        }
      }
    };
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.stop-timeout=20s", Contexts.UNELECTED)
        .withBean(ContextHolder.class, () -> holder)
        .withBean(LeaderService.class, () -> LeaderService.of(term -> { }, () -> { }))
        .withBean(ElectionListener.class, () -> closesTheContext)
        .run(context -> {
          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
          closeOnStopped.set(true);
          assertStopIsNotStalled(lifecycle, closed);
        });
  }

  /**
   * The common case: the context's own close is the stop in progress, and the listener closes it again, which
   * docs/spring-boot.md says a listener must not do from its callback. Spring 7's close returns at once from a second
   * thread while the context is closing. Spring 6.2's waits for the startup and shutdown lock, which the closing thread
   * holds while the lifecycle waits, at most {@code stop-timeout}, for this listener (found by adversarial review
   * h-review; decided: the rule, and a stall bounded by {@code stop-timeout} on Spring 6.2 for a listener that breaks
   * it).
   */
  @Test
  void aListenerThatClosesTheContextOnStoppedDuringTheContextsCloseStallsItForTheStopTimeoutAtMost() throws Exception {
    ContextHolder holder = new ContextHolder();
    CompletableFuture<Void> closed = new CompletableFuture<>();
    ElectionListener closesTheContext = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          closeAndNote(holder, closed);
        }
      }
    };
    // Spring 6.2 stalls for the stop timeout: a short one keeps the test short; Spring 7 must not stall at all.
    boolean stalls = springSix();
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.stop-timeout=" + (stalls ? "2s" : "20s"),
            Contexts.UNELECTED)
        .withBean(ContextHolder.class, () -> holder)
        .withBean(LeaderService.class, () -> LeaderService.of(term -> { }, () -> { }))
        .withBean(ElectionListener.class, () -> closesTheContext)
        .run(context -> {
          long begun = System.nanoTime();
          context.close();
          Duration closing = Duration.ofNanos(System.nanoTime() - begun);
          // Spring 6.2 and 7 interrupt a closing thread they take for stuck when another thread closes the context
          // (the listener's); the stop's wait goes on and sets the flag again: clear it.
          Thread.interrupted();
          closed.get(60, TimeUnit.SECONDS);
          assertThat(closing).as("the close waited for the listener that closed it again")
              .isLessThan(Duration.ofSeconds(stalls ? 12 : 5));
        });
  }

  static boolean springSix() {
    return String.valueOf(SpringVersion.getVersion()).startsWith("6.");
  }

  private static void closeAndNote(ContextHolder holder, CompletableFuture<Void> closed) {
    try {
      holder.context.get().close();
      closed.complete(null);
    } catch (RuntimeException | Error e) {
      closed.completeExceptionally(e);
    }
  }

  private static void assertStopIsNotStalled(ElectionLifecycle lifecycle, CompletableFuture<Void> closed)
      throws Exception {
    long begun = System.nanoTime();
    // Another thread's stop, as a context.stop() or the lifecycle's own stop() from the application.
    CompletableFuture.runAsync(lifecycle::stop).get(60, TimeUnit.SECONDS);
    Duration stopping = Duration.ofNanos(System.nanoTime() - begun);
    closed.get(60, TimeUnit.SECONDS);
    Duration closing = Duration.ofNanos(System.nanoTime() - begun);
    assertThat(stopping).as("the stop waited for the callback that waited for it").isLessThan(Duration.ofSeconds(5));
    assertThat(closing).as("the callback's close waited for the stop that waited for it")
        .isLessThan(Duration.ofSeconds(5));
  }
}
