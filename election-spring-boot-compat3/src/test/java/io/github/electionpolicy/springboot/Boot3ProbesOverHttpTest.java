package io.github.electionpolicy.springboot;

import io.github.electionpolicy.springboot.example.ElectionHealthIndicators;

/** The probes over HTTP on Spring Boot 3.5, with the health indicators docs/spring-boot.md shows for it. */
class Boot3ProbesOverHttpTest extends ProbesOverHttpContract {

  @Override
  Class<?>[] healthIndicatorSources() {
    return new Class<?>[] {ElectionHealthIndicators.class};
  }
}
