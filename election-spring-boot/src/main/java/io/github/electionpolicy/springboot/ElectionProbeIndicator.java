package io.github.electionpolicy.springboot;

import io.github.electionpolicy.fabric8.ElectionHealth;
import io.github.electionpolicy.fabric8.ElectionState;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * One of the two health indicators (Spring Boot 4's health API), fed from {@link ElectionLifecycle#health()}:
 * {@code electionLiveness} is {@code UP} while the runner is live and {@code DOWN} once it is not;
 * {@code electionReadiness} is {@code UP} while it is ready and {@code OUT_OF_SERVICE} otherwise, the status
 * Spring Boot's own readiness state reports when it refuses traffic. Thread-safe: each call takes a fresh
 * snapshot.
 */
final class ElectionProbeIndicator implements HealthIndicator {

  /** Which probe the indicator answers. */
  enum Probe {
    LIVENESS,
    READINESS
  }

  private final ElectionLifecycle election;
  private final Probe probe;

  ElectionProbeIndicator(ElectionLifecycle election, Probe probe) {
    this.election = Objects.requireNonNull(election, "election");
    this.probe = Objects.requireNonNull(probe, "probe");
  }

  @Override
  public Health health() {
    ElectionHealth health = election.health();
    Health.Builder builder;
    if (probe == Probe.LIVENESS) {
      builder = health.live() ? Health.up() : Health.down();
    } else {
      builder = health.ready() ? Health.up() : Health.outOfService();
    }
    builder.withDetail("state", health.state().kind().name())
        .withDetail("outcome", election.decision().outcome().name());
    leader(health.state()).ifPresent(leader -> builder.withDetail("leader", leader));
    health.sinceLastLeaseSuccess()
        .ifPresent(since -> builder.withDetail("sinceLastLeaseSuccess", since.toString()));
    return builder.build();
  }

  private static java.util.Optional<String> leader(ElectionState state) {
    if (state instanceof ElectionState.Leading leading) {
      return java.util.Optional.of(leading.term().holderIdentity());
    }
    if (state instanceof ElectionState.Following following) {
      return following.leader();
    }
    return java.util.Optional.empty();
  }

  @Override
  public String toString() {
    return "ElectionProbeIndicator{" + probe + "}";
  }
}
