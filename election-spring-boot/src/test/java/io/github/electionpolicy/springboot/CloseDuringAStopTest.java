package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.DisposableBean;

/**
 * A context that closes while a {@code stop()} on another thread is still closing the runner (a {@code context.stop()}
 * or the lifecycle's own {@code stop()}, then a SIGTERM): {@code isRunning()} was already false, so Spring skipped the
 * lifecycle and destroyed the beans at once, those the services and listeners still use among them (the application's
 * {@code KubernetesClient}, with which the Lease is to be released). The close must wait for the stop in progress, as
 * it waits for a stop of its own. Adversarial review h-attack31.
 */
class CloseDuringAStopTest {

  /** A bean of the application with a destroy method, e.g. a client or a connection pool a service uses. */
  static final class Resource implements DisposableBean {
    final CountDownLatch destroyed = new CountDownLatch(1);

    @Override
    public void destroy() {
      destroyed.countDown();
    }
  }

  @Test
  void aCloseWhileAStopIsClosingTheRunnerDestroysNoBeanBeforeTheRunnerStopped() throws Exception {
    Resource resource = new Resource();
    CountDownLatch stopEntered = new CountDownLatch(1);
    CountDownLatch letStop = new CountDownLatch(1);
    CompletableFuture<Boolean> destroyedWhenStoppedHeard = new CompletableFuture<>();
    LeaderService service = LeaderService.of(term -> { }, () -> {
      stopEntered.countDown();
      try {
        letStop.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          destroyedWhenStoppedHeard.complete(resource.destroyed.getCount() == 0);
        }
      }
    };

    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.stop-timeout=20s", Contexts.UNELECTED)
        .withBean(LeaderService.class, () -> service)
        .withBean(Resource.class, () -> resource)
        .withBean(ElectionListener.class, () -> listener)
        .run(context -> {
          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
          CompletableFuture<Void> stop = CompletableFuture.runAsync(lifecycle::stop);
          assertThat(stopEntered.await(10, TimeUnit.SECONDS)).as("the service's stop runs").isTrue();
          boolean runningWhileStopping = lifecycle.isRunning();

          CompletableFuture<Void> close = CompletableFuture.runAsync(context::close);
          // Fixed, the close waits for the stop, which waits for the latch: nothing is destroyed meanwhile.
          boolean destroyedWhileStopping = resource.destroyed.await(1, TimeUnit.SECONDS);
          letStop.countDown();
          stop.get(10, TimeUnit.SECONDS);
          close.get(10, TimeUnit.SECONDS);
          assertThat(destroyedWhileStopping).as("a bean was destroyed while the service still stopped").isFalse();
          assertThat(destroyedWhenStoppedHeard.get(10, TimeUnit.SECONDS))
              .as("the resource bean was destroyed before the listener heard STOPPED").isFalse();
          assertThat(resource.destroyed.getCount()).as("destroyed once the context closed").isZero();
          assertThat(runningWhileStopping).as("running while its stop was still closing the runner").isTrue();
        });
  }
}
