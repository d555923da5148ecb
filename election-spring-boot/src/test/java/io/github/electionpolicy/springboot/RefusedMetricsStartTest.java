package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.micrometer.ElectionMetrics;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.autoconfigure.AutoConfigurations;

/**
 * A registry that refuses one of the election's meters fails the start: {@code ElectionMetrics.start} closes the
 * runner it started and throws, and the refresh fails. The listeners must still hear {@code STOPPED} before the context
 * destroys its beans, as when a service fails to start ({@code ListenersBeforeDestroyTest}): the runner's
 * {@code close()} returns once {@code STOPPED} is reported, before the listeners heard it, so {@code
 * ElectionMetrics.start} waits for them (at most the runner's stop timeout) before it throws. Adversarial review
 * h-review; red until 2026-12-07.
 */
class RefusedMetricsStartTest {

  /** A bean of the application with a destroy method, e.g. a client or a connection pool a listener uses. */
  static final class Resource implements DisposableBean {
    final CountDownLatch destroyed = new CountDownLatch(1);

    @Override
    public void destroy() {
      destroyed.countDown();
    }
  }

  @Test
  void aListenerHearsStoppedBeforeTheContextDestroysItsBeansWhenARegistryRefusesAMeter() throws Exception {
    Resource resource = new Resource();
    CompletableFuture<Boolean> destroyedWhenStoppedHeard = new CompletableFuture<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          try {
            // The destroy releases this at once if it comes while the listener is still hearing STOPPED.
            destroyedWhenStoppedHeard.complete(resource.destroyed.await(2, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            destroyedWhenStoppedHeard.completeExceptionally(e);
          }
        }
      }
    };
    SimpleMeterRegistry refusing = new SimpleMeterRegistry();
    refusing.config().meterFilter(new MeterFilter() {
      @Override
      public Meter.Id map(Meter.Id id) {
        if (id.getName().equals(ElectionMetrics.DECISION)) {
          throw new IllegalArgumentException("a meter named " + id.getName() + " exists with other tag keys");
        }
        return id;
      }
    });

    Contexts.election()
        .withConfiguration(AutoConfigurations.of(ElectionMetricsAutoConfiguration.class))
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withBean(ElectionMetrics.class, () -> {
          // Bound as Spring Boot binds every MeterBinder when it creates the registry.
          ElectionMetrics metrics = new ElectionMetrics();
          metrics.bindTo(refusing);
          return metrics;
        })
        .withBean(LeaderService.class, () -> LeaderService.of(term -> { }, () -> { }))
        .withBean(Resource.class, () -> resource)
        .withBean(ElectionListener.class, () -> listener)
        .run(context -> assertThat(context).hasFailed());

    assertThat(destroyedWhenStoppedHeard.get(10, TimeUnit.SECONDS))
        .as("the resource bean was destroyed while the listener heard STOPPED")
        .isFalse();
    assertThat(resource.destroyed.getCount()).as("destroyed once the refresh failed").isZero();
  }
}
