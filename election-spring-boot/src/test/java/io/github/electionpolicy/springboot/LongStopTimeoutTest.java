package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A stop timeout long enough to mean "wait for the services however long they take" is a valid setting: the library
 * accepts any positive duration and caps its waits ({@code Durations.cappedNanos}). {@link ElectionLifecycle#stop()}'s
 * wait for the listeners converted it with {@code Duration.toNanos()}, which overflows past 292 years: stop() threw an
 * ArithmeticException after closing the runner, which Spring's lifecycle processor takes as a failed stop of the
 * phase. Adversarial review h-attack28.
 */
class LongStopTimeoutTest {

  @Test
  void aStopTimeoutPast292YearsStopsWithoutThrowing() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "election.stop-timeout=1000000d", Contexts.UNELECTED)
        .withBean(LeaderService.class, () -> LeaderService.of(term -> { }, () -> { }))
        .run(context -> {
          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
          assertThat(lifecycle.settings().stopTimeout()).isEqualTo(Duration.ofDays(1_000_000));

          assertThatCode(lifecycle::stop).doesNotThrowAnyException();
          assertThat(lifecycle.state().kind()).isEqualTo(ElectionState.Kind.STOPPED);
        });
  }
}
