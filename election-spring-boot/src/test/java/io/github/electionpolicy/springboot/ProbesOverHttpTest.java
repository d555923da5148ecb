package io.github.electionpolicy.springboot;

/** The probes over HTTP on Spring Boot 4, whose health indicators the auto-configuration defines. */
class ProbesOverHttpTest extends ProbesOverHttpContract {

  @Override
  Class<?>[] healthIndicatorSources() {
    return new Class<?>[0];
  }
}
