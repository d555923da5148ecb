package io.github.electionpolicy.springboot;

import java.time.Clock;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The read-only {@code election} Actuator endpoint ({@link ElectionEndpoint}) and the listener that keeps its
 * last renewals. Applies with Actuator on the class path ({@code spring-boot-starter-actuator}), the election
 * auto-configured, and the endpoint available: enabled (as every endpoint is by default) and exposed, which
 * it is not until the application says so:
 *
 * <pre>{@code
 * management.endpoints.web.exposure.include=health,election
 * }</pre>
 *
 * <p>Unexposed, neither bean is defined and nothing listens to the runner. The same on Spring Boot 4 and 3.5:
 * Actuator's endpoint API did not move.
 *
 * <p>Thread-safe, as Spring configuration classes are.
 */
@AutoConfiguration(after = ElectionAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnBean(ElectionLifecycle.class)
// @ConditionalOnAvailableEndpoint on the beans, not here: read only once the class-level conditions held, so an
// application without Actuator never needs its condition's class (as when this class is imported directly).
public final class ElectionEndpointAutoConfiguration {

  /** Creates the configuration; Spring Boot does, when the auto-configuration applies. */
  public ElectionEndpointAutoConfiguration() {}

  /**
   * The last renewals and renew failures: an {@code ElectionListener} bean, which the lifecycle adds to each
   * runner it starts (listener beans are looked up when it starts, once every bean exists).
   */
  @Bean
  @ConditionalOnAvailableEndpoint(endpoint = ElectionEndpoint.class)
  RenewalHistory electionRenewalHistory() {
    return new RenewalHistory(Clock.systemUTC());
  }

  /**
   * The endpoint, unless the application defines one.
   *
   * @param election the lifecycle whose runner it describes
   * @param history the last renewals
   * @return the endpoint
   */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnAvailableEndpoint
  ElectionEndpoint electionEndpoint(ElectionLifecycle election, RenewalHistory history) {
    return new ElectionEndpoint(election, history);
  }
}
