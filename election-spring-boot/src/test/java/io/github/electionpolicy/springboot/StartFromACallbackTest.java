package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@link ElectionLifecycle#start()} called from one of the runner's own callbacks while a {@code stop()} closes that
 * runner (a listener that starts the election again when it hears {@code STOPPED}, as after a loss): the start waits
 * for the stop, and the stop waits for the listeners to hear {@code STOPPED}, so each waited for the other. Adversarial
 * review h-review.
 */
class StartFromACallbackTest {

  @Test
  void aStartFromAListenerThatHearsAClosingContextsStopNeitherStallsTheCloseNorStartsAnotherRunner() throws Exception {
    AtomicReference<ElectionLifecycle> lifecycle = new AtomicReference<>();
    AtomicInteger serviceStarts = new AtomicInteger();
    CompletableFuture<Void> startReturned = new CompletableFuture<>();
    ElectionListener startsAgainOnStopped = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED && lifecycle.get() != null) {
          try {
            lifecycle.get().start();
            startReturned.complete(null);
          } catch (RuntimeException | Error e) {
            startReturned.completeExceptionally(e);
          }
        }
      }
    };
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.stop-timeout=20s", Contexts.UNELECTED)
        .withBean(LeaderService.class, () -> LeaderService.of(term -> serviceStarts.incrementAndGet(), () -> { }))
        .withBean(ElectionListener.class, () -> startsAgainOnStopped)
        .run(context -> {
          lifecycle.set(context.getBean(ElectionLifecycle.class));
          long begun = System.nanoTime();
          try {
            context.close();
            Duration closing = Duration.ofNanos(System.nanoTime() - begun);
            startReturned.get(30, TimeUnit.SECONDS);
            assertThat(closing).as("the close waited for the listener that waited for it").isLessThan(
                Duration.ofSeconds(10));
            assertThat(lifecycle.get().isRunning()).as("running after the context closed").isFalse();
            assertThat(serviceStarts).as("the services started again after the context closed").hasValue(1);
          } finally {
            lifecycle.get().stop();
          }
        });
  }
}
