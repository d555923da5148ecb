package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link HealthRule} as a table: each row is a published view, the time now, and the probes it gives. Times in
 * seconds; health budget 25 s, contact window (renew deadline) 10 s unless a row says a watching follower's 16 s.
 */
class HealthRuleTest {

  static final long S = 1_000_000_000L;
  static final LeadershipTerm TERM = LeadershipTerm.elected("me", 1, Instant.EPOCH, "1", () -> 0L, Long.MAX_VALUE);
  static final HealthRule.Inputs CONNECTED = new HealthRule.Inputs(true, Readiness.CONNECTED, 25 * S, 0);
  static final HealthRule.Inputs LEADER_ONLY = new HealthRule.Inputs(true, Readiness.LEADER_ONLY, 25 * S, 0);
  static final HealthRule.Inputs UNELECTED = new HealthRule.Inputs(false, Readiness.CONNECTED, 0, 0);

  static final ElectionState STARTING = new ElectionState.Starting();
  static final ElectionState FOLLOWING = new ElectionState.Following(Optional.of("other"));
  static final ElectionState LEADING = new ElectionState.Leading(TERM);
  static final ElectionState STOPPED = new ElectionState.Stopped(ElectionState.StopCause.LOST);
  static final ElectionState NOT_CONTENDING = new ElectionState.NotContending("me");

  /** ready, live for a view at {@code now} seconds whose last success was at {@code success} seconds (-1: none). */
  static String probe(HealthRule.Inputs inputs, ElectionState state, boolean running, boolean hung, long success,
      long windowSeconds, long now, boolean termValid, boolean closing) {
    RunnerView view = new RunnerView(state, running, hung,
        success < 0 ? Optional.empty() : Optional.of(success * S), windowSeconds * S);
    ElectionHealth health = HealthRule.evaluate(inputs, view, now * S, termValid, closing);
    return (health.ready() ? "ready" : "not ready") + ", " + (health.live() ? "live" : "not live");
  }

  @Test
  void theTable() {
    // inputs, state, services running, hung, last success, window, now, term valid, closing -> probes
    assertThat(probe(CONNECTED, STARTING, false, false, -1, 10, 5, false, false)).isEqualTo("not ready, live");
    assertThat(probe(CONNECTED, STARTING, false, false, -1, 10, 26, false, false)).isEqualTo("not ready, not live");
    assertThat(probe(CONNECTED, FOLLOWING, false, false, 1, 10, 5, false, false)).isEqualTo("ready, live");
    assertThat(probe(CONNECTED, FOLLOWING, false, false, 1, 10, 12, false, false)).isEqualTo("not ready, live");
    assertThat(probe(CONNECTED, FOLLOWING, false, false, 1, 16, 12, false, false))
        .as("a watching follower is in touch for its longer window").isEqualTo("ready, live");
    assertThat(probe(CONNECTED, FOLLOWING, false, false, 1, 10, 27, false, false)).isEqualTo("not ready, not live");
    assertThat(probe(CONNECTED, FOLLOWING, false, false, 1, 40, 30, false, false))
        .as("a window longer than the budget is the budget").isEqualTo("ready, live");
    assertThat(probe(CONNECTED, LEADING, true, false, 1, 10, 5, true, false)).isEqualTo("ready, live");
    assertThat(probe(CONNECTED, LEADING, false, false, 1, 10, 5, true, false))
        .as("CONNECTED: a leader whose services still start is ready").isEqualTo("ready, live");
    assertThat(probe(LEADER_ONLY, FOLLOWING, false, false, 1, 10, 5, false, false)).isEqualTo("not ready, live");
    assertThat(probe(LEADER_ONLY, LEADING, false, false, 1, 10, 5, true, false))
        .as("LEADER_ONLY: not before the services started").isEqualTo("not ready, live");
    assertThat(probe(LEADER_ONLY, LEADING, true, false, 1, 10, 5, true, false)).isEqualTo("ready, live");
    assertThat(probe(LEADER_ONLY, LEADING, true, false, 1, 10, 5, false, false))
        .as("LEADER_ONLY: not once the term ended").isEqualTo("not ready, live");
    assertThat(probe(LEADER_ONLY, LEADING, true, false, 1, 10, 5, true, true))
        .as("LEADER_ONLY: not once closing").isEqualTo("not ready, live");
    assertThat(probe(CONNECTED, STOPPED, false, false, 1, 10, 5, false, false)).isEqualTo("not ready, live");
    assertThat(probe(CONNECTED, STOPPED, false, false, 1, 10, 30, false, false)).isEqualTo("not ready, not live");
    assertThat(probe(CONNECTED, STOPPED, false, true, 1, 10, 5, false, false))
        .as("a stop() that outlived its timeout: restart the pod").isEqualTo("not ready, not live");
    assertThat(probe(UNELECTED, NOT_CONTENDING, false, false, -1, 0, 100, false, false)).isEqualTo("not ready, live");
    assertThat(probe(UNELECTED, NOT_CONTENDING, true, false, -1, 0, 100, false, false)).isEqualTo("ready, live");
    assertThat(probe(UNELECTED, STOPPED, false, true, -1, 0, 100, false, false)).isEqualTo("not ready, not live");
  }

  @Test
  void theBoundariesAreInclusive() {
    assertThat(probe(CONNECTED, FOLLOWING, false, false, 2, 10, 12, false, false))
        .as("in touch for exactly the window").isEqualTo("ready, live");
    assertThat(probe(CONNECTED, FOLLOWING, false, false, 1, 10, 26, false, false))
        .as("silent for exactly the budget").isEqualTo("not ready, live");
    HealthRule.Inputs startedLate = new HealthRule.Inputs(true, Readiness.CONNECTED, 25 * S, 100 * S);
    assertThat(probe(startedLate, STARTING, false, false, -1, 10, 125, false, false))
        .as("silence counts from the start").isEqualTo("not ready, live");
    assertThat(probe(startedLate, STARTING, false, false, -1, 10, 126, false, false)).isEqualTo("not ready, not live");
  }

  @Test
  void theProbesSayHowLongSinceTheLastSuccess() {
    RunnerView view = new RunnerView(FOLLOWING, false, false, Optional.of(3 * S), 10 * S);

    ElectionHealth health = HealthRule.evaluate(CONNECTED, view, 12 * S, false, false);

    assertThat(health.sinceLastLeaseSuccess()).contains(java.time.Duration.ofSeconds(9));
    assertThat(health.ready()).isTrue();
    assertThat(HealthRule.evaluate(CONNECTED, new RunnerView(FOLLOWING, false, false, Optional.empty(), 10 * S),
        12 * S, false, false).sinceLastLeaseSuccess()).isEmpty();
  }
}
