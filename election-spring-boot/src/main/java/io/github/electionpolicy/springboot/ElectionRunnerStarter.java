package io.github.electionpolicy.springboot;

import io.github.electionpolicy.fabric8.ElectionRunner;

/**
 * A bean that starts the runner from the builder the {@link ElectionLifecycle} prepared (decision, settings,
 * client, services, listeners, customizers applied), for code that must start the runner itself: a binder
 * that measures a runner by starting it, such as {@code election-micrometer}'s {@code ElectionMetrics}. Without
 * one, the lifecycle calls {@link ElectionRunner.Builder#start()}. At most one may be defined (a second fails the
 * context's start rather than letting one of them silently not run).
 *
 * <pre>{@code
 * @Bean
 * ElectionMetrics electionMetrics() {
 *   return new ElectionMetrics();            // a MeterBinder: Spring Boot binds it to the MeterRegistry
 * }
 *
 * @Bean
 * ElectionRunnerStarter measuredStart(ElectionMetrics metrics) {
 *   return metrics::start;                   // starts the runner with the binder's listener added
 * }
 * }</pre>
 *
 * <p>Called on each start of the lifecycle, from the thread that starts the context; it must return the runner
 * that {@code builder} started (whatever it throws fails the start, and with it the context's refresh; one that
 * throws after {@code builder.start()} returned must close that runner first, and wait for its listeners ({@code
 * runner.awaitStopped(runner.stopTimeout())}), as {@code ElectionMetrics} does, since the lifecycle never gets it: the
 * context destroys its beans as soon as the start failed).
 * Implementations need not be thread-safe.
 */
@FunctionalInterface
public interface ElectionRunnerStarter {

  /**
   * Starts the runner.
   *
   * @param builder the prepared builder; call its {@link ElectionRunner.Builder#start()} once, directly or
   *     through a binder
   * @return the started runner
   */
  ElectionRunner start(ElectionRunner.Builder builder);
}
