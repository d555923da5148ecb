package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;

/**
 * Review findings: each test is a way the integration with Spring Boot went wrong (or could), on Spring Boot 4
 * and, through election-spring-boot-compat3, on Spring Boot 3.5.
 */
class ElectionSpringBootAttackTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

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

  // ---- a refresh that fails after the lifecycle started ----

  /** A listener of ContextRefreshedEvent that fails, as a cache warm-up at start-up may. */
  static final class FailingOnRefresh implements ApplicationListener<ContextRefreshedEvent> {
    @Override
    public void onApplicationEvent(ContextRefreshedEvent event) {
      throw new IllegalStateException("cache warm-up failed");
    }
  }

  /**
   * The lifecycles have started when ContextRefreshedEvent is published; a listener that throws then fails the
   * refresh. Spring Framework 7 stops the started lifecycles before it destroys the beans; Spring Framework 6.2
   * (Spring Boot 3.5) only destroys the beans, and ElectionLifecycle had no destroy method: the runner went on
   * running the services of a context that failed to start.
   */
  @Test
  void aRefreshThatFailsAfterTheRunnerStartedStopsTheServices() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withBean(LeaderService.class, () -> log.service("orders"))
        .withBean(FailingOnRefresh.class, FailingOnRefresh::new)
        .run(context -> assertThat(context).hasFailed());

    assertThat(log.events()).containsExactly("start orders", "stop orders");
  }

  /** The same while contending: the runner would lead (and renew the Lease) for a context that failed. */
  @Test
  void aRefreshThatFailsAfterTheRunnerStartedClosesTheContendingRunner() {
    List<ElectionRunner> started = new CopyOnWriteArrayList<>();
    KubernetesClient client = api.replica("replica-1").client();
    Contexts.election()
        .withPropertyValues(Contexts.FAST_TIMINGS)
        .withPropertyValues("election.lease-name=orders-controller", "election.namespace=" + api.namespace(),
            "election.identity=replica-1", "election.loss-policy=recontend")
        .withBean(KubernetesClient.class, () -> client)
        .withBean(LeaderService.class, () -> log.service("orders"))
        .withBean(ElectionRunnerStarter.class, () -> builder -> {
          ElectionRunner runner = builder.start();
          started.add(runner);
          return runner;
        })
        .withBean(FailingOnRefresh.class, FailingOnRefresh::new)
        .run(context -> assertThat(context).hasFailed());

    assertThat(started).singleElement()
        .satisfies(runner -> assertThat(runner.state().kind()).isEqualTo(ElectionState.Kind.STOPPED));
  }
}
