package io.github.electionpolicy.springboot.example;

import io.github.electionpolicy.springboot.ElectionLifecycle;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The election's probes on Spring Boot 3.5, whose health API the auto-configuration (built for 4) cannot use. */
@Configuration(proxyBeanMethods = false)
public class ElectionHealthIndicators {

  @Bean
  HealthIndicator electionLivenessHealthIndicator(ElectionLifecycle election) {
    return () -> (election.health().live() ? Health.up() : Health.down())
        .withDetail("state", election.state().kind().name()).build();
  }

  @Bean
  HealthIndicator electionReadinessHealthIndicator(ElectionLifecycle election) {
    return () -> (election.health().ready() ? Health.up() : Health.outOfService())
        .withDetail("state", election.state().kind().name()).build();
  }
}
