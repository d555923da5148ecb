package io.github.electionpolicy.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Review h-metrics (of c1aa468; fixed since). LeaseSettings accepts any positive stopTimeout, "forever" included (AcceptedSettingsTest: the
 * runner saturates it with Durations.cappedNanos). ElectionMetrics.awaitListeners computes
 * {@code System.nanoTime() + runner.stopTimeout().toNanos()} unsaturated: FOREVER / ofSeconds(Long.MAX_VALUE) throw
 * ArithmeticException from toNanos() (caught, added to the refusal as suppressed, no wait at all): the refused start
 * throws while the listeners still hear STOPPED, the very race the commit fixes, back for the longest stop timeouts,
 * and the refusal carried a bare "long overflow". Fixed: the wait is computed in Durations, which awaitStopped caps.
 */
class RefusedStartLongStopTimeoutTest {

  @Test
  void forever() {
    refusedStartWaitsForTheListeners("forever");
  }

  @Test
  void maxSeconds() {
    refusedStartWaitsForTheListeners("maxSeconds");
  }

  private static void refusedStartWaitsForTheListeners(String which) {
    Duration stopTimeout = switch (which) {
      case "forever" -> ChronoUnit.FOREVER.getDuration();
      case "maxSeconds" -> Duration.ofSeconds(Long.MAX_VALUE);
      default -> throw new IllegalArgumentException(which);
    };
    SimpleMeterRegistry refusing = new SimpleMeterRegistry();
    refusing.config().meterFilter(new MeterFilter() {
      @Override
      public Meter.Id map(Meter.Id id) {
        if (id.getName().equals(ElectionMetrics.DECISION)) {
          throw new IllegalArgumentException("refused: other tag keys");
        }
        return id;
      }
    });
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(refusing);
    AtomicBoolean heard = new AtomicBoolean();
    ElectionRunner.Builder builder = ElectionRunner.builder()
        .decision(MeteredReplica.KILL_SWITCH_OFF)
        .settings(LeaseSettings.builder().leaseName("long").stopTimeout(stopTimeout).build())
        .service(LeaderService.of(term -> { }, () -> { }))
        .listener(new ElectionListener() {
          @Override
          public void stateChanged(ElectionState previous, ElectionState current) {
            if (current.kind() == ElectionState.Kind.STOPPED) {
              LockSupport.parkNanos(300_000_000L);
              heard.set(true);
            }
          }
        });

    Throwable thrown = catchThrowable(() -> metrics.start(builder));

    assertThat(thrown).hasMessageContaining("other tag keys");
    assertThat(heard).as("the listener heard STOPPED when the start threw").isTrue();
    assertThat(thrown.getSuppressed()).as("what the refused start adds to the refusal").isEmpty();
  }
}
