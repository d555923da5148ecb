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
 * The application's {@link ElectionListener} beans hear {@code STOPPED} before the context destroys its beans.
 * {@code ElectionRunner.close()} returns once {@code STOPPED} is reported, but the listeners hear it on the runner's
 * callback thread ({@code awaitStopped()} is what waits for them): {@code ElectionLifecycle.stop()} returned after
 * {@code close()} alone, so Spring went on destroying the beans (the application's {@code KubernetesClient}, the
 * {@code MeterRegistry}, whatever a listener uses) while the listeners were still to hear the end of the term. Found
 * by a review of the integration.
 */
class ListenersBeforeDestroyTest {

  /** A bean of the application with a destroy method, e.g. a client or a connection pool a listener uses. */
  static final class Resource implements DisposableBean {
    final CountDownLatch destroyed = new CountDownLatch(1);

    @Override
    public void destroy() {
      destroyed.countDown();
    }
  }

  @Test
  void aListenerHearsStoppedBeforeTheContextDestroysItsBeans() throws Exception {
    Resource resource = new Resource();
    CompletableFuture<Boolean> destroyedWhenStoppedHeard = new CompletableFuture<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          try {
            // The destroy releases this at once if it comes while the listener is still hearing STOPPED; if the
            // context waits for the listener, nothing is destroyed and the wait ends at its bound.
            destroyedWhenStoppedHeard.complete(resource.destroyed.await(2, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            destroyedWhenStoppedHeard.completeExceptionally(e);
          }
        }
      }
    };

    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withBean(LeaderService.class, () -> LeaderService.of(term -> { }, () -> { }))
        .withBean(Resource.class, () -> resource)
        .withBean(ElectionListener.class, () -> listener)
        .run(context -> assertThat(context).hasNotFailed());

    assertThat(destroyedWhenStoppedHeard.get(10, TimeUnit.SECONDS))
        .as("the resource bean was destroyed while the listener heard STOPPED")
        .isFalse();
    assertThat(resource.destroyed.getCount()).as("destroyed once the context closed").isZero();
  }
  /**
   * The same when the runner fails to start: running unelected, a service whose {@code start} throws fails the
   * refresh, and {@code Builder.start()} throws once the services that started stopped, before the runner reports
   * {@code STOPPED}; {@code ElectionLifecycle.start()} rethrew at once (it has no runner to wait for), so Spring
   * destroyed the beans while the listeners were still to hear {@code STOPPED}. Adversarial review h-attack28.
   */
  @Test
  void aListenerHearsStoppedBeforeTheContextDestroysItsBeansWhenTheRunnerFailsToStart() throws Exception {
    Resource resource = new Resource();
    CompletableFuture<Boolean> destroyedWhenStoppedHeard = new CompletableFuture<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          try {
            destroyedWhenStoppedHeard.complete(resource.destroyed.await(2, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            destroyedWhenStoppedHeard.completeExceptionally(e);
          }
        }
      }
    };

    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withBean(LeaderService.class, () -> LeaderService.of(term -> {
          throw new IllegalStateException("cannot start");
        }, () -> { }))
        .withBean(Resource.class, () -> resource)
        .withBean(ElectionListener.class, () -> listener)
        .run(context -> assertThat(context).hasFailed());

    assertThat(destroyedWhenStoppedHeard.get(10, TimeUnit.SECONDS))
        .as("the resource bean was destroyed while the listener heard STOPPED")
        .isFalse();
    assertThat(resource.destroyed.getCount()).as("destroyed once the refresh failed").isZero();
  }
}
