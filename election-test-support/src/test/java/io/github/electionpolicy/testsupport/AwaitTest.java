package io.github.electionpolicy.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {

  @Test
  void aConditionThatBecomesTrueEndsTheWait() throws InterruptedException {
    AtomicInteger calls = new AtomicInteger();
    assertThat(Await.holds(() -> calls.incrementAndGet() >= 3, Duration.ofSeconds(5))).isTrue();
    assertThat(calls).hasValue(3);
  }

  @Test
  void aConditionThatNeverHoldsIsFalseAtTheDeadline() throws InterruptedException {
    assertThat(Await.holds(() -> false, Duration.ofMillis(20))).isFalse();
  }

  @Test
  void aValueThatAppearsIsReturned() throws InterruptedException {
    AtomicInteger calls = new AtomicInteger();
    assertThat(Await.present(() -> calls.incrementAndGet() < 2 ? Optional.empty() : Optional.of("x"),
        Duration.ofSeconds(5))).contains("x");
    assertThat(Await.present(Optional::empty, Duration.ofMillis(20))).isEmpty();
  }

  @Test
  void untilFailsNamingTheConditionAndTheState() {
    assertThatThrownBy(() -> Await.until("the leader leads", () -> false, Duration.ofMillis(20), () -> "state X"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("the leader leads")
        .hasMessageContaining("state X");
  }

  @Test
  void untilReturnsWhenTheConditionHolds() {
    Await.until("true", () -> true);
  }
}
