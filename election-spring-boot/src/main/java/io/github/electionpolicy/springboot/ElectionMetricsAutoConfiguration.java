package io.github.electionpolicy.springboot;

import io.github.electionpolicy.micrometer.ElectionMetrics;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Measures the election with {@code election-micrometer} when it and Micrometer are on the class path: an
 * {@link ElectionMetrics} bean, which Spring Boot binds to its {@code MeterRegistry} as it binds every
 * {@code MeterBinder}, and an {@link ElectionRunnerStarter} through which the {@link ElectionLifecycle} starts
 * the runner, so the binder measures the runner it started ({@link ElectionMetrics#start}).
 *
 * <p>Define an {@link ElectionMetrics} bean of your own to add tags ({@code new ElectionMetrics(Tags.of("replica",
 * id))}): it replaces this one and is still started through the lifecycle. Define an {@link ElectionRunnerStarter}
 * of your own and this configuration defines neither bean. Without a {@code MeterRegistry} (no Actuator, no
 * registry of your own) the binder is never bound and measures nothing.
 *
 * <pre>{@code
 * <dependency>
 *   <groupId>io.github.electionpolicy</groupId>
 *   <artifactId>election-micrometer</artifactId>
 * </dependency>
 * }</pre>
 *
 * <p>Thread-safe, as Spring configuration classes are: its bean methods run while the context refreshes.
 */
@AutoConfiguration(after = ElectionAutoConfiguration.class)
@ConditionalOnClass(name = {"io.micrometer.core.instrument.MeterRegistry",
    "io.github.electionpolicy.micrometer.ElectionMetrics"})
@ConditionalOnBean(ElectionLifecycle.class)
@ConditionalOnMissingBean(ElectionRunnerStarter.class)
public class ElectionMetricsAutoConfiguration {

  /** Creates the configuration; Spring Boot does, when its conditions hold. */
  public ElectionMetricsAutoConfiguration() {}

  /**
   * The binder, unless the application defines one.
   *
   * @return a binder without extra tags
   */
  @Bean
  @ConditionalOnMissingBean
  public ElectionMetrics electionMetrics() {
    return new ElectionMetrics();
  }

  /**
   * Starts the runner through the binder (on each start of the lifecycle: the binder measures the runner of each
   * start in turn).
   *
   * @param metrics the binder
   * @return the starter
   */
  @Bean
  public ElectionRunnerStarter electionMetricsStarter(ElectionMetrics metrics) {
    return metrics::start;
  }
}
