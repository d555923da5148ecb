package io.github.electionpolicy.springboot;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.Exiter;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossHandler;
import io.github.electionpolicy.fabric8.LossPolicy;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Auto-configures leader election for a Spring Boot application from the {@code election.*} properties
 * ({@link ElectionProperties}): the decision, the Lease settings and an {@link ElectionLifecycle} that runs
 * every {@link LeaderService} bean only while this replica leads (or at once, when it runs unelected) and
 * releases the Lease when the context closes. Off with {@code election.enabled=false}.
 *
 * <p>Every setting is checked by the library itself, while the context refreshes: an invalid kill switch, a
 * blank substrate name, a lease name that is not a DNS-1123 subdomain or timings that break
 * {@code leaseDuration > renewDeadline > 1.2 × retryPeriod} fail the start-up with the library's
 * {@link InvalidElectionSettingException}, whose message names the setting, the value and the fix (Spring
 * Boot's failure report also names the {@code election.*} property to change).
 *
 * <p>Beans it reads from the application, each optional:
 * <ul>
 *   <li>{@link LeaderService}: the leader-only work, started in {@link org.springframework.core.annotation.Order
 *       order} while leading and stopped in reverse order on loss and shutdown;
 *   <li>{@link KubernetesClient}: the client for the Lease calls; without one, the lifecycle builds its own
 *       ({@code new KubernetesClientBuilder().build()}: in a pod from its service account, elsewhere from the
 *       kubeconfig) and closes it on shutdown, and it is never a bean of the context;
 *   <li>{@link ElectionListener} and {@link ElectionRunnerCustomizer}: added to, or applied to, the runner;
 *   <li>{@link ElectionRunnerStarter}: starts the runner from the prepared builder (a metrics binder that
 *       measures the runner it starts), instead of {@code builder.start()};
 *   <li>{@link LossHandler}: the policy of {@code election.loss-policy=custom};
 *   <li>{@link Exiter}: how {@code election.loss-policy=exit} ends the process once the context is closed
 *       ({@link Exiter#system()} unless defined; tests define one that records the status);
 *   <li>{@link Environment} (the core's): where the kill switch and the pod variables are read; by default
 *       Spring's environment.
 * </ul>
 *
 * <p>Each bean it defines backs off when the application defines one of the same type.
 *
 * <pre>{@code
 * @SpringBootApplication
 * public class OrdersService {
 *   public static void main(String[] args) {
 *     SpringApplication.run(OrdersService.class, args);   // election.lease-name=orders-controller
 *   }
 *
 *   @Bean(destroyMethod = "close")
 *   KubernetesClient kubernetesClient() {                   // the lifecycle uses it for the Lease too
 *     return new KubernetesClientBuilder().build();
 *   }
 *
 *   @Bean
 *   LeaderService ordersReconciler(KubernetesClient client) {
 *     return new OrdersReconciler(client);                  // runs on one replica at a time
 *   }
 * }
 * }</pre>
 *
 * <p>Thread-safe, as Spring configuration classes are: its bean methods run while the context refreshes.
 */
@AutoConfiguration
// Not @ConditionalOnBooleanProperty: it takes only the text "true" for on (see OnElectionEnabledCondition).
@Conditional(OnElectionEnabledCondition.class)
@EnableConfigurationProperties(ElectionProperties.class)
public final class ElectionAutoConfiguration {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionAutoConfiguration.class);

  /** Creates the configuration; Spring Boot does, when the auto-configuration applies. */
  public ElectionAutoConfiguration() {}

  /**
   * The environment the decision and the default identity read: Spring's, so variables can also be given as
   * properties.
   *
   * @param environment Spring's environment
   * @return the core's environment over Spring's
   */
  @Bean
  @ConditionalOnMissingBean
  public Environment electionEnvironment(org.springframework.core.env.Environment environment) {
    return new SpringEnvironment(environment);
  }

  /**
   * The decision, made once, when the context is created, from the kill switch, the process host and the
   * substrate.
   *
   * @param properties the {@code election.*} properties
   * @param environment where the kill switch and the pod variables are read
   * @return the decision
   * @throws InvalidElectionSettingException if the kill-switch variable's name or value, or the substrate's
   *     name, is not valid
   */
  @Bean
  @ConditionalOnMissingBean
  public ElectionDecision electionDecision(ElectionProperties properties, Environment environment) {
    ElectionPolicy policy = ElectionPolicy.builder().killSwitchVariable(properties.killSwitchVariable()).build();
    ElectionProperties.SubstrateProperties substrate = properties.substrate();
    return policy.decide(environment, Substrate.of(substrate.name(), substrate.usesKubernetesApi()));
  }

  /**
   * The Lease settings from the properties, checked by {@link LeaseSettings.Builder#build()}.
   *
   * @param properties the {@code election.*} properties
   * @param environment where the default identity's variables are read
   * @param context the context that {@code election.loss-policy=exit} closes
   * @param exiters the application's {@link Exiter}, if any
   * @param lossHandlers the application's {@link LossHandler}, if any
   * @return the settings
   * @throws InvalidElectionSettingException if a setting is not valid, or {@code election.loss-policy=custom}
   *     finds no {@link LossHandler} bean
   */
  @Bean
  @ConditionalOnMissingBean
  public LeaseSettings electionLeaseSettings(ElectionProperties properties, Environment environment,
      ApplicationContext context, ObjectProvider<Exiter> exiters, ObjectProvider<LossHandler> lossHandlers) {
    LeaseSettings.Builder builder = LeaseSettings.builder()
        .environment(environment)
        .lossPolicy(lossPolicy(properties, context, exiters, lossHandlers))
        .leadershipEvents(properties.leadershipEvents());
    // Left unset, a setting keeps the library's default, derived ones (requestTimeout, ...) included.
    Optional.ofNullable(properties.leaseName()).ifPresent(builder::leaseName);
    Optional.ofNullable(properties.namespace()).ifPresent(builder::namespace);
    Optional.ofNullable(properties.identity()).ifPresent(builder::identity);
    Optional.ofNullable(properties.leaseDuration()).ifPresent(builder::leaseDuration);
    Optional.ofNullable(properties.renewDeadline()).ifPresent(builder::renewDeadline);
    Optional.ofNullable(properties.retryPeriod()).ifPresent(builder::retryPeriod);
    Optional.ofNullable(properties.requestTimeout()).ifPresent(builder::requestTimeout);
    Optional.ofNullable(properties.healthBudget()).ifPresent(builder::healthBudget);
    Optional.ofNullable(properties.stopTimeout()).ifPresent(builder::stopTimeout);
    return builder.build();
  }

  private static LossPolicy lossPolicy(ElectionProperties properties, ApplicationContext context,
      ObjectProvider<Exiter> exiters, ObjectProvider<LossHandler> lossHandlers) {
    LossPolicy.Kind kind = properties.lossPolicy();
    LossHandler handler = lossHandlers.getIfAvailable();
    if (handler != null && kind != LossPolicy.Kind.CUSTOM) {
      LOG.warn("The LossHandler bean {} is not used: {}.loss-policy={}; set it to custom to use it", handler,
          ElectionProperties.PREFIX, kind.name().toLowerCase(java.util.Locale.ROOT));
    }
    switch (kind) {
      case RECONTEND:
        return LossPolicy.recontend();
      case CUSTOM:
        if (handler == null) {
          throw new InvalidElectionSettingException(ElectionProperties.PREFIX + ".loss-policy", "custom",
              "exit, recontend, or custom with a LossHandler bean in the context",
              "define a LossHandler bean, or choose exit or recontend");
        }
        return LossPolicy.custom(handler);
      case EXIT:
      default:
        return LossPolicy.exit(new ContextClosingExiter(context, exiters.getIfAvailable(Exiter::system)));
    }
  }

  /**
   * The lifecycle that starts and closes the runner with the context.
   *
   * <p>Metrics: a binder that measures the runner it starts is an {@link ElectionRunnerStarter} bean; {@link
   * ElectionMetricsAutoConfiguration} defines one when {@code election-micrometer} is on the class path.
   *
   * @param properties the {@code election.*} properties
   * @param decision the decision
   * @param settings the Lease settings
   * @param services the {@link LeaderService} beans
   * @param listeners the {@link ElectionListener} beans
   * @param customizers the {@link ElectionRunnerCustomizer} beans
   * @param starters the application's {@link ElectionRunnerStarter}, if any
   * @param clients the application's {@link KubernetesClient}, if any
   * @return the lifecycle
   */
  // destroyMethod: a refresh that fails after the lifecycles started (a ContextRefreshedEvent listener that throws)
  // destroys the beans without stopping the lifecycles on Spring Framework 6.2 (Spring Boot 3.5); stop() then
  // closes the runner, which would otherwise go on leading for a context that failed. A no-op after a close.
  @Bean(destroyMethod = "stop")
  @ConditionalOnMissingBean
  public ElectionLifecycle electionLifecycle(ElectionProperties properties, ElectionDecision decision,
      LeaseSettings settings, ObjectProvider<LeaderService> services, ObjectProvider<ElectionListener> listeners,
      ObjectProvider<ElectionRunnerCustomizer> customizers, ObjectProvider<ElectionRunnerStarter> starters,
      ObjectProvider<KubernetesClient> clients) {
    ElectionLifecycle.Inputs inputs = new ElectionLifecycle.Inputs() {
      @Override
      public List<LeaderService> services() {
        return services.orderedStream().collect(Collectors.toList());
      }

      @Override
      public List<ElectionListener> listeners() {
        return listeners.orderedStream().collect(Collectors.toList());
      }

      @Override
      public List<ElectionRunnerCustomizer> customizers() {
        return customizers.orderedStream().collect(Collectors.toList());
      }

      @Override
      public ElectionRunnerStarter starter() {
        return starters.getIfAvailable(() -> ElectionRunner.Builder::start);
      }

      @Override
      public Optional<KubernetesClient> applicationClient() {
        // Several clients and none primary: fails, rather than guessing which cluster holds the Lease.
        return Optional.ofNullable(clients.getIfAvailable());
      }

      @Override
      public Supplier<KubernetesClient> clientFactory() {
        return () -> new KubernetesClientBuilder().build();
      }
    };
    return new ElectionLifecycle(decision, settings, properties.readiness(), properties.rbacPreflight(),
        properties.phase(), inputs);
  }
}
