package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The endpoint's renewal history: two bounded rings, newest first, with what failed in one short line. */
class RenewalHistoryTest {

  private static final Instant NOW = Instant.parse("2026-12-01T11:05:41.007Z");

  private final RenewalHistory history = new RenewalHistory(Clock.fixed(NOW, ZoneOffset.UTC));

  @Test
  void keepsTheLastTenRenewalsNewestFirstWithTheTimeAndTheRoundTrip() {
    IntStream.rangeClosed(1, 12).forEach(millis -> history.renewed(Duration.ofMillis(millis)));

    assertThat(history.renewals()).hasSize(RenewalHistory.CAPACITY).hasSize(10);
    assertThat(history.renewals().stream().map(ElectionDescriptor.Renewal::roundTripMillis)
        .collect(Collectors.toList())).containsExactly(12L, 11L, 10L, 9L, 8L, 7L, 6L, 5L, 4L, 3L);
    assertThat(history.renewals().get(0).time()).isEqualTo("2026-12-01T11:05:41.007Z");
  }

  @Test
  void aRunOfFailuresNeverPushesTheLastRenewalsOut() {
    history.renewed(Duration.ofMillis(4));
    IntStream.rangeClosed(1, 25).forEach(i -> history.renewFailed(new IllegalStateException("refused " + i),
        Duration.ofMillis(200L * i)));

    assertThat(history.renewals()).extracting(ElectionDescriptor.Renewal::roundTripMillis).containsExactly(4L);
    assertThat(history.renewFailures()).hasSize(10);
    assertThat(history.renewFailures().get(0).cause()).isEqualTo("refused 25");
    assertThat(history.renewFailures().get(0).sinceLastRenewalMillis()).isEqualTo(5000);
    assertThat(history.renewFailures().get(9).cause()).isEqualTo("refused 16");
  }

  @Test
  void aCauseIsTheFirstLineOfItsMessageCutToTwoHundredCharacters() {
    assertThat(RenewalHistory.describe(new RuntimeException("  Failure executing: PUT\n  at Foo.bar(Foo.java:1)")))
        .isEqualTo("Failure executing: PUT");
    assertThat(RenewalHistory.describe(new RuntimeException("x".repeat(500))))
        .hasSize(RenewalHistory.CAUSE_LENGTH).hasSize(200).endsWith("\u2026");
    assertThat(RenewalHistory.describe(new java.net.ConnectException()))
        .as("no message: the exception's name").isEqualTo("ConnectException");
  }

  @Test
  void whatItReturnsIsACopyThatLaterRenewalsDoNotChange() {
    history.renewed(Duration.ofMillis(1));
    var before = history.renewals();
    history.renewed(Duration.ofMillis(2));

    assertThat(before).hasSize(1);
    assertThat(history.renewals()).hasSize(2);
  }
}
