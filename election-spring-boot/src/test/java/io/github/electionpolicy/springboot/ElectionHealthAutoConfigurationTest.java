package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The health indicators (Spring Boot 4's health API): when they apply, and what they report for each state of
 * the runner. Spring Boot 3.5 has its health API in another package; the compat module checks the indicators
 * docs/spring-boot.md shows for it instead.
 */
class ElectionHealthAutoConfigurationTest {

  private static final String LIVENESS = "electionLivenessHealthIndicator";
  private static final String READINESS = "electionReadinessHealthIndicator";

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private static ApplicationContextRunner withHealth() {
    return new ApplicationContextRunner().withConfiguration(
        AutoConfigurations.of(ElectionAutoConfiguration.class, ElectionHealthAutoConfiguration.class));
  }

  private ApplicationContextRunner contending(ReplicaLink replica, String readiness) {
    return withHealth()
        .withPropertyValues(Contexts.FAST_TIMINGS)
        .withPropertyValues("election.lease-name=orders-controller", "election.namespace=" + api.namespace(),
            "election.identity=" + replica.name(), "election.loss-policy=recontend",
            "election.readiness=" + readiness)
        .withBean(KubernetesClient.class, replica::client);
  }

  private static Health health(AssertableApplicationContext context, String indicator) {
    return context.getBean(indicator, HealthIndicator.class).health();
  }

  @Test
  void bothIndicatorsApplyWithTheHealthModuleAndTheElection() {
    withHealth().withPropertyValues("election.lease-name=a", Contexts.UNELECTED).run(context -> {
      assertThat(context).hasBean(LIVENESS).hasBean(READINESS);
      // Unelected and started: live and ready, with the state in the details.
      assertThat(health(context, LIVENESS).getStatus()).isEqualTo(Status.UP);
      assertThat(health(context, READINESS).getStatus()).isEqualTo(Status.UP);
      assertThat(health(context, READINESS).getDetails())
          .containsEntry("state", "NOT_CONTENDING").containsEntry("outcome", "RUN_UNELECTED");
    });
  }

  @Test
  void managementHealthElectionEnabledFalseTurnsThemOff() {
    withHealth().withPropertyValues("election.lease-name=a", Contexts.UNELECTED,
        "management.health.election.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(LIVENESS).doesNotHaveBean(READINESS)
            .hasSingleBean(ElectionLifecycle.class));
  }

  @Test
  void managementHealthDefaultsEnabledFalseTurnsThemOffUnlessEnabledByName() {
    withHealth().withPropertyValues("election.lease-name=a", Contexts.UNELECTED,
        "management.health.defaults.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(LIVENESS));
    withHealth().withPropertyValues("election.lease-name=a", Contexts.UNELECTED,
        "management.health.defaults.enabled=false", "management.health.election.enabled=true")
        .run(context -> assertThat(context).hasBean(LIVENESS));
  }

  @Test
  void withoutTheHealthModuleThereAreNoIndicatorsAndTheElectionStillRuns() {
    withHealth().withClassLoader(new FilteredClassLoader(HealthIndicator.class))
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LIVENESS)
            .hasSingleBean(ElectionLifecycle.class));
  }

  @Test
  void withoutTheElectionThereAreNoIndicators() {
    withHealth().withPropertyValues("election.enabled=false")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LIVENESS).doesNotHaveBean(READINESS));
  }

  @Test
  void anIndicatorOfTheApplicationUnderTheSameNameReplacesOurs() {
    HealthIndicator own = () -> Health.up().withDetail("own", true).build();
    withHealth().withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withBean(READINESS, HealthIndicator.class, () -> own)
        .run(context -> {
          assertThat(context.getBean(READINESS)).isSameAs(own);
          assertThat(context).hasBean(LIVENESS);
        });
  }

  @Test
  void connectedLeaderAndFollowerAreBothReadyAndTheLeaderIsNamed() {
    ReplicaLink first = api.replica("replica-1");
    ReplicaLink second = api.replica("replica-2");
    contending(first, "connected").run(leader -> {
      ElectionLifecycle leading = leader.getBean(ElectionLifecycle.class);
      Await.until("replica-1 leads", () -> leading.state().kind() == ElectionState.Kind.LEADING);
      contending(second, "connected").run(follower -> {
        ElectionLifecycle following = follower.getBean(ElectionLifecycle.class);
        Await.until("replica-2 follows and is ready", () -> following.health().ready());
        Health readiness = health(follower, READINESS);
        assertThat(readiness.getStatus()).isEqualTo(Status.UP);
        assertThat(readiness.getDetails()).containsEntry("state", "FOLLOWING").containsEntry("leader", "replica-1")
            .containsKey("sinceLastLeaseSuccess");
        assertThat(health(leader, READINESS).getDetails()).containsEntry("leader", "replica-1");
        assertThat(health(follower, LIVENESS).getStatus()).isEqualTo(Status.UP);
      });
    });
  }

  @Test
  void leaderOnlyAFollowerIsOutOfServiceButLive() {
    ReplicaLink first = api.replica("replica-1");
    ReplicaLink second = api.replica("replica-2");
    contending(first, "leader-only").run(leader -> {
      Await.until("replica-1 is ready as leader", () -> leader.getBean(ElectionLifecycle.class).health().ready());
      assertThat(health(leader, READINESS).getStatus()).isEqualTo(Status.UP);
      contending(second, "leader-only").run(follower -> {
        ElectionLifecycle following = follower.getBean(ElectionLifecycle.class);
        Await.until("replica-2 follows", () -> following.state().kind() == ElectionState.Kind.FOLLOWING);
        assertThat(health(follower, READINESS).getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
        assertThat(health(follower, LIVENESS).getStatus()).isEqualTo(Status.UP);
      });
    });
  }

  @Test
  void cutOffFromTheApiServerTheLeaderTurnsNotReadyThenNotLive() {
    ReplicaLink replica = api.replica("replica-1");
    contending(replica, "connected").run(context -> {
      ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
      Await.until("it leads and is ready", () -> lifecycle.health().ready());

      replica.refuseConnections();

      Await.until("readiness out of service",
          () -> health(context, READINESS).getStatus().equals(Status.OUT_OF_SERVICE));
      // The health budget (lease duration + renew deadline, 3.5 s here) passes without a successful call.
      Await.until("liveness down", () -> health(context, LIVENESS).getStatus().equals(Status.DOWN));
    });
  }
}
