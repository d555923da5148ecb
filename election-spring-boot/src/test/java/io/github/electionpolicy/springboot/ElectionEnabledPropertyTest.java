package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.LeaderService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code election.enabled} is read as Spring binds a boolean property, not as the literal {@code "true"}: every
 * spelling Spring binds, the environment variable {@code ELECTION_ENABLED}, and a value that is not a boolean
 * (an empty one included) fails the start-up naming the property. Found by a review of the integration, on Spring
 * Boot 4 and, through election-spring-boot-compat3, on Spring Boot 3.5.
 */
class ElectionEnabledPropertyTest {

  private final ServiceLog log = new ServiceLog();

  // ---- election.enabled is read as Spring reads a boolean property, not as the literal "true" ----

  /**
   * Spring binds {@code on}, {@code yes} and {@code 1} to {@code true} (so does ElectionProperties.enabled), and
   * the library's own kill switch accepts them; {@code @ConditionalOnBooleanProperty} only matches the text
   * "true", so these values turned the election off: no runner, and no LeaderService ever started.
   */
  @ParameterizedTest(name = "election.enabled={0}")
  @ValueSource(strings = {"true", "TRUE", "on", "yes", "1"})
  void everySpellingOfTrueThatSpringBindsKeepsTheElectionOn(String value) {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED, "election.enabled=" + value)
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          assertThat(context).hasNotFailed().hasSingleBean(ElectionLifecycle.class);
          assertThat(log.running()).containsExactly("orders");
        });
  }

  @ParameterizedTest(name = "election.enabled={0}")
  @ValueSource(strings = {"false", "FALSE", "off", "no", "0"})
  void everySpellingOfFalseThatSpringBindsTurnsTheElectionOff(String value) {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED, "election.enabled=" + value)
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(ElectionLifecycle.class));
  }

  /** A typo turned the election off without a word; now it fails the start-up naming the property. */
  @ParameterizedTest(name = "election.enabled={0}")
  @ValueSource(strings = {"ture", "enabled", "fasle"})
  void aValueThatIsNotABooleanFailsTheStartUpNamingTheProperty(String value) {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED, "election.enabled=" + value)
        .run(context -> {
          assertThat(context).hasFailed();
          assertThat(context.getStartupFailure()).hasStackTraceContaining("election.enabled");
        });
  }

  /** What a Deployment sets: the environment variable, relaxed-bound to election.enabled. */
  @ParameterizedTest(name = "ELECTION_ENABLED={0}")
  @ValueSource(strings = {"false", "true"})
  void theEnvironmentVariableElectionEnabledIsRead(String value) {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
            new org.springframework.core.env.SystemEnvironmentPropertySource(
                org.springframework.core.env.StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                java.util.Map.of("ELECTION_ENABLED", value))))
        .run(context -> assertThat(context.containsBean("electionLifecycle")).isEqualTo(Boolean.parseBoolean(value)));
  }

  /**
   * An empty value (an unset placeholder, {@code election.enabled=${ELECTION_ON:}}) turned the election off
   * silently; now it fails the start-up naming the property, as an empty {@code election.rbac-preflight} does.
   */
  @Test
  void anEmptyEnabledFailsTheStartUpInsteadOfTurningTheElectionOff() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED, "election.enabled=")
        .run(context -> {
          assertThat(context).hasFailed();
          assertThat(context.getStartupFailure()).hasStackTraceContaining("election.enabled");
        });
  }
}
