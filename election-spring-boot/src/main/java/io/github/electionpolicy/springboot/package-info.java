/**
 * Spring Boot auto-configuration for election-policy: add {@code election-spring-boot} to a Spring Boot
 * application, set {@code election.lease-name}, and every {@link io.github.electionpolicy.fabric8.LeaderService}
 * bean runs only on the replica that holds the Lease.
 *
 * <p>{@link io.github.electionpolicy.springboot.ElectionAutoConfiguration} binds
 * {@link io.github.electionpolicy.springboot.ElectionProperties} ({@code election.*}), makes the decision and the
 * Lease settings (the library checks both while the context starts), and defines the
 * {@link io.github.electionpolicy.springboot.ElectionLifecycle}, a {@code SmartLifecycle} that starts the
 * runner with the context and closes it, releasing the Lease, before the context's beans are destroyed.
 * {@link io.github.electionpolicy.springboot.ElectionHealthAutoConfiguration} adds the liveness and readiness
 * health indicators for Actuator's probe groups, and
 * {@link io.github.electionpolicy.springboot.ElectionEndpointAutoConfiguration} the read-only {@code election}
 * Actuator endpoint ({@link io.github.electionpolicy.springboot.ElectionEndpoint}) once it is exposed.
 * {@link io.github.electionpolicy.springboot.ElectionRunnerCustomizer} adjusts the runner before it starts, and
 * {@link io.github.electionpolicy.springboot.ElectionRunnerStarter} starts it (for a binder that measures the
 * runner it starts).
 *
 * <pre>{@code
 * @SpringBootApplication
 * public class OrdersService {
 *   public static void main(String[] args) {
 *     SpringApplication.run(OrdersService.class, args);
 *   }
 *
 *   @Bean(destroyMethod = "close")
 *   KubernetesClient kubernetesClient() {       // without this bean the lifecycle makes a client of its own,
 *     return new KubernetesClientBuilder().build();   // which is not a bean: define one to inject it
 *   }
 *
 *   @Bean
 *   LeaderService ordersReconciler(KubernetesClient client) {
 *     OrdersReconciler reconciler = new OrdersReconciler(client);
 *     return LeaderService.of(reconciler::start, reconciler::stop);
 *   }
 * }
 * }</pre>
 */
package io.github.electionpolicy.springboot;
