package io.github.electionpolicy.springboot;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Two Actuator health indicators fed from {@link ElectionLifecycle#health()}, for the Kubernetes probes:
 * {@code electionLiveness} ({@code UP} while the runner is live, else {@code DOWN}) and
 * {@code electionReadiness} ({@code UP} while it is ready, else {@code OUT_OF_SERVICE}). Applies with Spring
 * Boot 4's health module on the class path ({@code spring-boot-starter-actuator} brings it) and the election
 * auto-configured; {@code management.health.election.enabled=false} turns both off.
 *
 * <p>Add them to the probe groups, so that each probe answers for what it means:
 *
 * <pre>{@code
 * management:
 *   endpoint:
 *     health:
 *       probes:
 *         enabled: true
 *       group:
 *         liveness:
 *           include: livenessState,electionLiveness
 *         readiness:
 *           include: readinessState,electionReadiness
 * }</pre>
 *
 * <p>Under {@code election.readiness=leader-only} a follower's {@code electionReadiness} is
 * {@code OUT_OF_SERVICE} by design, and so is the aggregate {@code /actuator/health} that includes it: probe
 * the groups, never the aggregate. On Spring Boot 3.5, whose health API lives in another package, these
 * indicators do not apply; docs/spring-boot.md shows the two beans to declare instead.
 *
 * <p>Thread-safe, as Spring configuration classes are.
 */
@AutoConfiguration(after = ElectionAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(ElectionLifecycle.class)
@ConditionalOnEnabledHealthIndicator("election")
public final class ElectionHealthAutoConfiguration {

  /** Creates the configuration; Spring Boot does, when the auto-configuration applies. */
  public ElectionHealthAutoConfiguration() {}

  /**
   * The liveness indicator, {@code electionLiveness}.
   *
   * @param election the lifecycle whose health it reports
   * @return {@code UP} while the runner is live, else {@code DOWN}
   */
  @Bean
  @ConditionalOnMissingBean(name = "electionLivenessHealthIndicator")
  public HealthIndicator electionLivenessHealthIndicator(ElectionLifecycle election) {
    return new ElectionProbeIndicator(election, ElectionProbeIndicator.Probe.LIVENESS);
  }

  /**
   * The readiness indicator, {@code electionReadiness}.
   *
   * @param election the lifecycle whose health it reports
   * @return {@code UP} while the runner is ready, else {@code OUT_OF_SERVICE}
   */
  @Bean
  @ConditionalOnMissingBean(name = "electionReadinessHealthIndicator")
  public HealthIndicator electionReadinessHealthIndicator(ElectionLifecycle election) {
    return new ElectionProbeIndicator(election, ElectionProbeIndicator.Probe.READINESS);
  }
}
