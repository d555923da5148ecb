package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;

/**
 * The runner follows the application context's lifecycle: a refresh that fails after the runner started closes
 * it (Spring Boot 3.5 does not stop the lifecycles then), a stopped context releases the Lease and a started one
 * leads again, liveness after a custom stop, a service that closes the context. Found by a review of the
 * integration, on Spring Boot 4 and, through election-spring-boot-compat3, on Spring Boot 3.5.
 */
class ContextLifecycleTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final ServiceLog log = new ServiceLog();

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

  // ---- the context stopped and started again ----

  private org.springframework.boot.test.context.runner.ApplicationContextRunner contending(
      io.github.electionpolicy.testkit.fabric8.ReplicaLink replica) {
    return Contexts.election()
        .withPropertyValues(Contexts.FAST_TIMINGS)
        .withPropertyValues("election.lease-name=orders-controller", "election.namespace=" + api.namespace(),
            "election.identity=" + replica.name(), "election.loss-policy=recontend")
        .withBean(KubernetesClient.class, replica::client);
  }

  /**
   * docs/spring-boot.md says the runner "stops and starts again" with the context; ElectionConditionsTest shows
   * it only unelected. Contending, a stop releases the Lease and a start leads again, with the same client.
   */
  @Test
  void contendingAStoppedContextReleasesTheLeaseAndAStartedOneLeadsAgain() {
    io.github.electionpolicy.testkit.fabric8.ReplicaLink replica = api.replica("replica-1");
    contending(replica)
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
          Await.until("it leads", () -> log.running().contains("orders"));

          context.getSourceApplicationContext().stop();
          assertThat(log.running()).isEmpty();
          assertThat(api.leaseWrites("orders-controller")).last()
              .satisfies(write -> assertThat(write.holder()).isEmpty());

          context.getSourceApplicationContext().start();
          Await.until("it leads again", () -> log.running().contains("orders"));
          assertThat(lifecycle.state().kind()).isEqualTo(ElectionState.Kind.LEADING);
          assertThat(lifecycle.lastClient()).containsSame(replica.client());
        });
    assertThat(log.events()).containsExactly("start orders", "stop orders", "start orders", "stop orders");
  }

  /** docs/spring-boot.md's two metrics beans, as a configuration. */
  @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
  static class MeasuredElection {
    @org.springframework.context.annotation.Bean
    io.github.electionpolicy.micrometer.ElectionMetrics electionMetrics() {
      return new io.github.electionpolicy.micrometer.ElectionMetrics();
    }

    @org.springframework.context.annotation.Bean
    ElectionRunnerStarter measuredStart(io.github.electionpolicy.micrometer.ElectionMetrics metrics) {
      return metrics::start;
    }
  }

  /**
   * ElectionRunnerStarter is "called on each start of the lifecycle", but the ElectionMetrics bean the page
   * shows measures one runner for good: the second start (context.stop() then start(), or Spring's CRaC
   * checkpoint/restore, which stops and starts every lifecycle) threw "one binder measures one runner". Fixed in
   * election-micrometer: once its runner stopped, a binder starts and measures the next one.
   */
  @Test
  void theDocumentedMetricsBeansSurviveAStopAndAStart() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withUserConfiguration(MeasuredElection.class)
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          context.getSourceApplicationContext().stop();
          context.getSourceApplicationContext().start();
          assertThat(log.running()).containsExactly("orders");
        });
  }

  /**
   * docs/spring-boot.md: under {@code custom} a LossHandler that answers STOP stops the runner and the application
   * keeps running, but a STOPPED runner turns not live once the health budget has passed without a Lease call,
   * which it no longer makes: electionLiveness goes DOWN, and with the page's probe groups the kubelet restarts the
   * pod. (The review found the page claiming the application simply keeps running; the page now says this.)
   */
  @Test
  void afterACustomStopLivenessTurnsDownOneHealthBudgetLaterAsThePageSays() {
    io.github.electionpolicy.testkit.fabric8.ReplicaLink replica = api.replica("replica-1");
    contending(replica)
        .withPropertyValues("election.loss-policy=custom")
        .withBean(io.github.electionpolicy.fabric8.LossHandler.class,
            () -> lostTerm -> io.github.electionpolicy.fabric8.LossHandler.AfterLoss.STOP)
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
          Await.until("it leads", () -> log.running().contains("orders"));

          api.overwriteHolder("orders-controller", "someone-else"); // a loss, with the API server reachable

          Await.until("the runner stopped after the loss",
              () -> lifecycle.state().kind() == ElectionState.Kind.STOPPED);
          assertThat(context).hasNotFailed();
          assertThat(log.running()).as("no leader-only work after the STOP").isEmpty();
          Await.until("not live once the health budget passed without a Lease call",
              () -> !lifecycle.health().live());
          assertThat(lifecycle.health().sinceLastLeaseSuccess()).hasValueSatisfying(
              since -> assertThat(since).isGreaterThan(lifecycle.settings().healthBudget()));
        });
  }

  /**
   * A LeaderService whose start() closes the application (it found the cluster unusable, say). From start() itself
   * the close would have to wait for the very callback that asked for it: ElectionLifecycle.stop() returns as soon
   * as the runner's close() does, Spring destroys the KubernetesClient, and the release fails (the review's
   * finding). docs/spring-boot.md says to close the context from a thread of your own; done that way, the Lease is
   * released as on any shutdown.
   */
  @Test
  void aServiceThatClosesTheContextFromAThreadOfItsOwnHasTheLeaseReleased() {
    io.github.electionpolicy.testkit.fabric8.ReplicaLink replica = api.replica("replica-1");
    java.util.concurrent.atomic.AtomicReference<ElectionRunner> runner =
        new java.util.concurrent.atomic.AtomicReference<>();
    contending(replica)
        .withBean(ElectionRunnerStarter.class, () -> builder -> {
          runner.set(builder.start());
          return runner.get();
        })
        .withUserConfiguration(ClosingService.class)
        .run(context -> Await.until("the runner stopped", () -> runner.get() != null
            && runner.get().state().kind() == ElectionState.Kind.STOPPED));
    assertThat(api.leaseWrites("orders-controller")).extracting(w -> w.holder())
        .containsSubsequence("replica-1", "");
  }

  /** A LeaderService that closes its application context when it starts, as the page says: from its own thread. */
  @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
  static class ClosingService {
    @org.springframework.context.annotation.Bean
    LeaderService closingService(org.springframework.context.ConfigurableApplicationContext context) {
      return LeaderService.of(term -> new Thread(context::close).start(), () -> { });
    }
  }
}
