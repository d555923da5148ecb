package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.testsupport.Await;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link ElectionLifecycle}'s Javadoc promises that {@code start()} and {@code stop()} are serialised. {@code stop()}
 * held its lock only to take the runner, then closed it without: a {@code start()} meanwhile (a
 * {@code context.start()} on another thread while a {@code context.stop()} is closing the runner; Spring calls it,
 * since {@code isRunning()} is already false) started a second runner, and its services, while the first one's
 * services were still stopping: two runs of the leader-only work in one process. Adversarial review h-attack28.
 */
class LifecycleSerialisedTest {

  @Test
  void aStartWhileAStopIsClosingTheRunnerWaitsForTheStop() throws Exception {
    CountDownLatch stopEntered = new CountDownLatch(1);
    CountDownLatch letStop = new CountDownLatch(1);
    AtomicBoolean stopping = new AtomicBoolean();
    AtomicBoolean startedWhileStopping = new AtomicBoolean();
    AtomicInteger starts = new AtomicInteger();
    LeaderService service = LeaderService.of(term -> {
      starts.incrementAndGet();
      if (stopping.get()) {
        startedWhileStopping.set(true);
      }
    }, () -> {
      stopping.set(true);
      stopEntered.countDown();
      try {
        letStop.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        stopping.set(false);
      }
    });

    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.stop-timeout=20s", Contexts.UNELECTED)
        .withBean(LeaderService.class, () -> service)
        .run(context -> {
          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
          assertThat(starts).hasValue(1);
          CompletableFuture<Void> stop = CompletableFuture.runAsync(lifecycle::stop);
          assertThat(stopEntered.await(10, TimeUnit.SECONDS)).as("the service's stop runs").isTrue();

          CompletableFuture<Void> start = CompletableFuture.runAsync(lifecycle::start);
          try {
            // Fixed, the start waits for the stop, which waits for the latch: let the stop go after a while.
            start.get(500, TimeUnit.MILLISECONDS);
          } catch (TimeoutException expected) {
            // the start waits
          }
          letStop.countDown();
          stop.get(10, TimeUnit.SECONDS);
          start.get(10, TimeUnit.SECONDS);
          Await.until("the second start ran the service", () -> starts.get() == 2);
          assertThat(startedWhileStopping).as("a service started while the first runner's service still stopped")
              .isFalse();
        });
  }
}
