package io.github.electionpolicy.benchmarks.failover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchmarkSettingsTest {

  @Test
  void defaultsRunBothTimingsWithTwentyFastAndFiveDefaultRounds() {
    BenchmarkSettings settings = BenchmarkSettings.parse();

    assertThat(settings.timings()).containsExactly(Timings.FAST, Timings.DEFAULT);
    assertThat(settings.roundsFor(Timings.FAST)).isEqualTo(20);
    assertThat(settings.roundsFor(Timings.DEFAULT)).isEqualTo(5);
    assertThat(settings.replicas()).isEqualTo(3);
  }

  @Test
  void settleIsFiveRetryPeriodsButAtLeastThreeSeconds() {
    BenchmarkSettings settings = BenchmarkSettings.parse();

    assertThat(settings.settleFor(Timings.FAST)).isEqualTo(Duration.ofSeconds(3));
    assertThat(settings.settleFor(Timings.DEFAULT)).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void argumentsOverrideTheDefaults() {
    BenchmarkSettings settings = BenchmarkSettings.parse(
        "timings=default", "rounds.default=2", "contenders=stock", "settle.ms=500", "replicas=2");

    assertThat(settings.timings()).containsExactly(Timings.DEFAULT);
    assertThat(settings.roundsFor(Timings.DEFAULT)).isEqualTo(2);
    assertThat(settings.contenders()).isEqualTo(List.of("stock"));
    assertThat(settings.settleFor(Timings.DEFAULT)).isEqualTo(Duration.ofMillis(500));
  }

  @Test
  void anUnknownKeyNamesTheAcceptedKeys() {
    assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("round=3"))
        .withMessageStartingWith("round is not valid: accepted keys are timings");
  }

  @Test
  void oneReplicaIsRejected() {
    assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("replicas=1"))
        .withMessageStartingWith("replicas=1 is not valid");
  }

  @Test
  void unknownTimingsAreRejected() {
    assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("timings=slow"))
        .withMessageStartingWith("timings=slow is not valid: accepted values are fast, default");
  }
}
