package io.github.electionpolicy.springboot;

import io.github.electionpolicy.fabric8.ElectionRunner;

/**
 * A bean that adjusts the {@link ElectionRunner.Builder} before the runner starts, after the auto-configuration
 * has set the decision, the settings, the readiness mode, the client and every {@link
 * io.github.electionpolicy.fabric8.LeaderService} and {@link io.github.electionpolicy.fabric8.ElectionListener}
 * bean. Customizers run in {@link org.springframework.core.annotation.Order order}, on each start of the
 * {@link ElectionLifecycle}; one that throws fails the start, and with it the context's refresh.
 *
 * <pre>{@code
 * @Bean
 * ElectionRunnerCustomizer auditListener(AuditLog audit) {
 *   return builder -> builder.listener(new ElectionListener() {
 *     public void stateChanged(ElectionState previous, ElectionState current) {
 *       audit.record("election", previous + " -> " + current);
 *     }
 *   });
 * }
 * }</pre>
 *
 * <p>Most applications need none: a {@code LeaderService} or {@code ElectionListener} bean is picked up as it
 * is. Implementations are called from the thread that starts the context and need not be thread-safe.
 */
@FunctionalInterface
public interface ElectionRunnerCustomizer {

  /**
   * Adjusts the builder; do not call {@link ElectionRunner.Builder#start()}, the lifecycle does.
   *
   * @param builder the builder the runner will start from
   */
  void customize(ElectionRunner.Builder builder);
}
