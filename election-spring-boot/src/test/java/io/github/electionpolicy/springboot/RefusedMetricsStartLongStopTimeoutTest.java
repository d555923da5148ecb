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
 * Review h-metrics (of c1aa468; fixed since): RefusedMetricsStartTest with a stop timeout past 292 years ("wait for the services however long
 * they take", accepted, as LongStopTimeoutTest shows). ElectionMetrics.awaitListeners converts it with
 * Duration.toNanos(), which overflows (the ArithmeticException is swallowed into the refusal's suppressed), so the
 * refused start throws at once and Spring destroys the beans while a listener still hears STOPPED: the h-attack28
 * overflow again, in the new wait.
 */
class RefusedMetricsStartLongStopTimeoutTest {

  /** A bean of the application with a destroy method, e.g. a client or a connection pool a listener uses. */
  static final class Resource implements DisposableBean {
    final CountDownLatch destroyed = new CountDownLatch(1);

    @Override
    public void destroy() {
      destroyed.countDown();
    }
  }

  @Test
  void aListenerHearsStoppedBeforeTheBeansAreDestroyedWhenARegistryRefusesAMeterUnderAVeryLongStopTimeout() throws Exception {
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
        .withPropertyValues("election.lease-name=a", "election.stop-timeout=1000000d", Contexts.UNELECTED)
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
