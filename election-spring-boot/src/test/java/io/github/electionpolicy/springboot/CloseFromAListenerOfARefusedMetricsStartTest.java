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
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@link CloseFromAListenerOfAFailedStartTest}'s rule through the other failed start that waits for the listeners: a
 * meter registry that refuses the election's meters, so that {@code ElectionMetrics.start} closes the runner and waits,
 * at most its stop timeout, for the listeners to hear {@code STOPPED} (found by adversarial review h-metrics).
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
  void aListenerThatClosesTheContextFromAThreadOfItsOwnDoesNotHoldTheRefusedStart() throws Exception {
    ContextHolder holder = new ContextHolder();
    CompletableFuture<Void> closed = new CompletableFuture<>();
    Duration failing = refuseTheStart(holder, "20s", () -> new Thread(() -> closeAndNote(holder, closed)).start());
    closed.get(30, TimeUnit.SECONDS);
    assertThat(failing).as("the refused start waited for a listener that did not wait for it").isLessThan(
        Duration.ofSeconds(10));
  }

  @Test
  void aListenerThatClosesTheContextFromItsCallbackHoldsTheRefusedStartForTheStopTimeoutAtMost() throws Exception {
    ContextHolder holder = new ContextHolder();
    CompletableFuture<Void> closed = new CompletableFuture<>();
    Duration failing = refuseTheStart(holder, "2s", () -> closeAndNote(holder, closed));
    closed.get(30, TimeUnit.SECONDS);
    assertThat(failing).as("the refused start's wait, bounded by stop-timeout=2s").isLessThan(Duration.ofSeconds(12));
  }

  /** Runs a context whose registry refuses the decision meter; the listener runs {@code onStopped} on STOPPED. */
  private static Duration refuseTheStart(ContextHolder holder, String stopTimeout, Runnable onStopped) {
    ElectionListener closesOnStopped = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          onStopped.run();
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
        .withPropertyValues("election.lease-name=a", "election.stop-timeout=" + stopTimeout, Contexts.UNELECTED)
        .withBean(ContextHolder.class, () -> holder)
        .withBean(LeaderService.class, () -> LeaderService.of(term -> { }, () -> { }))
        .withBean(ElectionListener.class, () -> closesOnStopped)
        .run(context -> assertThat(context).hasFailed());
    // Spring 6.2 and 7 interrupt a refresh thread they take for stuck when another thread closes the context (here the
    // listener's, while the refused start waits for it); the start's wait goes on and sets the flag again: clear it.
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
