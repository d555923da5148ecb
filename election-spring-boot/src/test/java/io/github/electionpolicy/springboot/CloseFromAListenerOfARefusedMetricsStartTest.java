package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import io.github.electionpolicy.micrometer.ElectionMetrics;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Review h-metrics (of c1aa468): CloseFromAListenerOfAFailedStartTest (disabled, a known stall of the service-failure
 * path), through the refusal path the commit changed. Before c1aa468 a refused ElectionMetrics.start threw at once; now it
 * waits on Spring's refresh thread (holding the startup/shutdown lock) for a listener that waits for that lock, so the
 * failed refresh takes the whole stopTimeout.
 */
class CloseFromAListenerOfARefusedMetricsStartTest {

  /** Hands the test's listener the context, as an application's listener would get it injected. */
  static final class ContextHolder implements ApplicationContextAware {
    final AtomicReference<ConfigurableApplicationContext> context = new AtomicReference<>();

    @Override
    public void setApplicationContext(ApplicationContext applicationContext) {
      context.set((ConfigurableApplicationContext) applicationContext);
    }
  }

  @Test
  @Disabled("Finding (review h-metrics), not fixed: red, no deadlock but a stall, the same as "
      + "CloseFromAListenerOfAFailedStartTest's. Since ElectionMetrics.start waits, at most the runner's stopTimeout, "
      + "for the listeners of a runner a registry refused (so that they hear STOPPED before the context destroys the "
      + "beans they use: RefusedMetricsStartTest), a listener whose context.close() waits for Spring's startup lock, "
      + "which the refresh thread holds meanwhile, holds the failed start-up for the whole stopTimeout. The trade is "
      + "the service-failure path's: a fix must decide whether a failed start may stop waiting for such a listener.")
  void aListenerThatClosesTheContextWhenARegistryRefusesAMeterDoesNotHoldTheFailedRefreshForTheStopTimeout()
      throws Exception {
    ContextHolder holder = new ContextHolder();
    CompletableFuture<Void> closed = new CompletableFuture<>();
    ElectionListener closesOnStopped = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          try {
            holder.context.get().close();
            closed.complete(null);
          } catch (RuntimeException | Error e) {
            closed.completeExceptionally(e);
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
    long begun = System.nanoTime();
    Contexts.election()
        .withConfiguration(AutoConfigurations.of(ElectionMetricsAutoConfiguration.class))
        .withBean(ElectionMetrics.class, () -> {
          ElectionMetrics metrics = new ElectionMetrics();
          metrics.bindTo(refusing);
          return metrics;
        })
        .withPropertyValues("election.lease-name=a", "election.stop-timeout=20s", Contexts.UNELECTED)
        .withBean(ContextHolder.class, () -> holder)
        .withBean(LeaderService.class, () -> LeaderService.of(term -> { }, () -> { }))
        .withBean(ElectionListener.class, () -> closesOnStopped)
        .run(context -> assertThat(context).hasFailed());
    Duration failing = Duration.ofNanos(System.nanoTime() - begun);
    closed.get(30, TimeUnit.SECONDS);
    assertThat(failing).as("the failed start waited for the listener that waited for it").isLessThan(
        Duration.ofSeconds(10));
  }
}
