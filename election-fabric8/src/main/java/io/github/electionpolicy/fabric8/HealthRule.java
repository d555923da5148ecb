package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.Optional;

/**
 * The probes' rule as a pure function of what a runner last published and the time now: see
 * {@link ElectionHealth} for the rule in words, and {@code HealthRuleTest} for its table.
 */
final class HealthRule {

  /** What the rule reads: fixed at start, then one immutable {@link RunnerView} and the clock. */
  record Inputs(boolean contends, Readiness readiness, long healthBudgetNanos, long startNanos) {}

  private HealthRule() {}

  /**
   * @param termValid whether the term of a {@code LEADING} state is still valid now (read by the caller)
   * @param closing whether {@code close()} was called
   */
  static ElectionHealth evaluate(Inputs inputs, RunnerView view, long nowNanos, boolean termValid, boolean closing) {
    ElectionState state = view.state();
    if (!inputs.contends()) {
      boolean ready = state.kind() == ElectionState.Kind.NOT_CONTENDING && view.servicesRunning();
      return new ElectionHealth(ready, !view.servicesHung(), state, Optional.empty());
    }
    Optional<Duration> since = view.lastSuccessNanos().map(last -> Duration.ofNanos(nowNanos - last));
    long window = view.contactWindowNanos();
    // A leader serves once its services started for a term that is still valid, and stops serving as soon as it
    // closes (LEADER_ONLY must never show two ready leaders around a hand-over).
    boolean servingLeader = state.kind() == ElectionState.Kind.LEADING && view.servicesRunning() && termValid
        && !closing;
    boolean eligible = inputs.readiness() == Readiness.LEADER_ONLY ? servingLeader
        : state.kind() == ElectionState.Kind.LEADING || state.kind() == ElectionState.Kind.FOLLOWING;
    boolean ready = eligible && since.map(s -> s.toNanos() <= window).orElse(false);
    long silent = since.map(Duration::toNanos).orElse(nowNanos - inputs.startNanos());
    // A watching follower reads once per lease duration: it is in touch for that long, whatever the budget.
    long budget = Math.max(inputs.healthBudgetNanos(), window);
    // A service whose stop() outlived its timeout may still run: the process must be restarted.
    boolean live = silent <= budget && !view.servicesHung();
    return new ElectionHealth(ready, live, state, since);
  }
}
