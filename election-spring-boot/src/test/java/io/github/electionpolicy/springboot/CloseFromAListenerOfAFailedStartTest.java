package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A listener that closes the context when it hears {@code STOPPED} (an application's "exit when the election ends"),
 * when the runner fails to start unelected (a service's {@code start} throws). docs/spring-boot.md says a listener
 * must not close the context from its callback, but from a thread of its own: the refresh that failed holds Spring's
 * startup lock while {@code Builder.start()} waits for the listeners to hear {@code STOPPED} (so that they hear it
 * before the beans they use are destroyed), and a close from the callback waits for that lock. Found by adversarial
 * review h-review; decided: the rule, and a stall bounded by {@code stop-timeout} for a listener that breaks it.
 */
class CloseFromAListenerOfAFailedStartTest {

  /** Hands the test's listener the context, as an application's listener would get it injected. */
  static final class ContextHolder implements ApplicationContextAware {
    final AtomicReference<ConfigurableApplicationContext> context = new AtomicReference<>();

    @Override
    public void setApplicationContext(ApplicationContext applicationContext) {
      context.set((ConfigurableApplicationContext) applicationContext);
    }
  }

  @Test
  void aListenerThatClosesTheContextFromAThreadOfItsOwnDoesNotHoldTheFailedRefresh() throws Exception {
    ContextHolder holder = new ContextHolder();
    CompletableFuture<Void> closed = new CompletableFuture<>();
    Duration failing = failTheStart(holder, "20s", () -> new Thread(() -> closeAndNote(holder, closed)).start());
    closed.get(30, TimeUnit.SECONDS);
    assertThat(failing).as("the failed start waited for a listener that did not wait for it").isLessThan(
        Duration.ofSeconds(10));
  }

  @Test
  void aListenerThatClosesTheContextFromItsCallbackHoldsTheFailedRefreshForTheStopTimeoutAtMost() throws Exception {
    ContextHolder holder = new ContextHolder();
    CompletableFuture<Void> closed = new CompletableFuture<>();
    Duration failing = failTheStart(holder, "2s", () -> closeAndNote(holder, closed));
    // No deadlock: the start gives up waiting at the stop timeout, and the listener's close then goes through.
    closed.get(30, TimeUnit.SECONDS);
    assertThat(failing).as("the failed start's wait, bounded by stop-timeout=2s").isLessThan(Duration.ofSeconds(12));
  }

  /** Runs a context whose unelected start fails; the listener runs {@code onStopped} when it hears STOPPED. */
  private static Duration failTheStart(ContextHolder holder, String stopTimeout, Runnable onStopped) {
    ElectionListener closesOnStopped = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          onStopped.run();
        }
      }
    };
    long begun = System.nanoTime();
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.stop-timeout=" + stopTimeout, Contexts.UNELECTED)
        .withBean(ContextHolder.class, () -> holder)
        .withBean(LeaderService.class, () -> LeaderService.of(term -> {
          throw new IllegalStateException("cannot start");
        }, () -> { }))
        .withBean(ElectionListener.class, () -> closesOnStopped)
        .run(context -> assertThat(context).hasFailed());
    // Spring 6.2 and 7 interrupt a refresh thread they take for stuck when another thread closes the context (here the
    // listener's, while the failed start waits for it); the start's wait goes on and sets the flag again: clear it.
    Thread.interrupted();
    return Duration.ofNanos(System.nanoTime() - begun);
  }

  private static void closeAndNote(ContextHolder holder, CompletableFuture<Void> closed) {
    try {
      holder.context.get().close();
      closed.complete(null);
    } catch (RuntimeException | Error e) {
      closed.completeExceptionally(e);
    }
  }
}
