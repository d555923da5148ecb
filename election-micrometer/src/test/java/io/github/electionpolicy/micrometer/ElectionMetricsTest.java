package io.github.electionpolicy.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the meters say about a real runner contending on the embedded Lease API: leading, following, a
 * hand-over, renewals and their failures, and a runner that runs unelected.
 */
// A runner opened in try-with-resources is often there only to be closed.
@SuppressWarnings("try")
class ElectionMetricsTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  @Test
  void aLeaderShowsMasterStatusOneAndOneTransition() throws Exception {
    try (MeteredReplica a = MeteredReplica.start(api, "a")) {
      assertThat(Await.holds(() -> a.masterStatus() == 1)).as("master status of the leader").isTrue();
      // The state is the runner's own; the count follows on its listener thread.
      assertThat(Await.holds(() -> a.transitions() == 1)).isTrue();

      assertThat(a.renewFailures()).isZero();
      assertThat(a.decision().getId().getTag(ElectionMetrics.TAG_OUTCOME)).isEqualTo("CONTEND");
      assertThat(a.decision().getId().getTag(ElectionMetrics.TAG_REASONS)).isEqualTo("SUBSTRATE_USES_KUBERNETES_API");
      assertThat(a.decision().value()).isEqualTo(1);
    }
  }

  @Test
  void everyMeterIsTaggedWithTheLeasesNameAndNamespace() throws Exception {
    try (MeteredReplica a = MeteredReplica.startLeader(api, "a")) {
      assertThat(a.registry.getMeters()).hasSize(6).allSatisfy(meter -> {
        assertThat(meter.getId().getName()).startsWith("leader.election.");
        assertThat(meter.getId().getTag("name")).isEqualTo(MeteredReplica.LEASE);
        assertThat(meter.getId().getTag("namespace")).isEqualTo(api.namespace());
      });
    }
  }

  @Test
  void aFollowerShowsMasterStatusZeroAndNoTransition() throws Exception {
    try (MeteredReplica a = MeteredReplica.startLeader(api, "a");
        MeteredReplica b = MeteredReplica.start(api, "b")) {
      assertThat(Await.holds(() -> b.runner.state().kind().name().equals("FOLLOWING"))).isTrue();

      assertThat(b.masterStatus()).isZero();
      assertThat(b.transitions()).isZero();
      assertThat(b.renewals()).isZero();
      // A follower is in touch too: its reads succeed (a watching follower reads once per lease duration).
      assertThat(Await.holds(() -> b.lastSuccessAgeSeconds() < seconds(MeteredReplica.LEASE_DURATION.plusSeconds(2))))
          .isTrue();
      assertThat(a.masterStatus()).isEqualTo(1);
    }
  }

  @Test
  void aHandOverMovesMasterStatusAndCountsATransitionForTheNewLeader() throws Exception {
    MeteredReplica a = MeteredReplica.startLeader(api, "a");
    try (MeteredReplica b = MeteredReplica.start(api, "b")) {
      assertThat(Await.holds(() -> b.runner.state().kind().name().equals("FOLLOWING"))).isTrue();
      assertThat(Await.holds(() -> a.transitions() == 1)).isTrue();

      a.close();

      assertThat(Await.holds(() -> b.masterStatus() == 1)).as("the follower took over").isTrue();
      assertThat(Await.holds(() -> b.transitions() == 1)).isTrue();
      assertThat(a.runner.awaitStopped(Await.GENEROUS)).isTrue();
      assertThat(a.registry.getMeters()).as("the old leader was closed: its series are gone").isEmpty();
    }
  }

  @Test
  void eachRenewalIsTimed() throws Exception {
    try (MeteredReplica a = MeteredReplica.startLeader(api, "a")) {
      assertThat(Await.holds(() -> a.renewals() >= 3)).as("renewals every retry period").isTrue();

      Timer renewals = a.registry.get(ElectionMetrics.RENEW_DURATION).timer();
      assertThat(renewals.totalTime(TimeUnit.NANOSECONDS)).isPositive();
      // A renewal answered after the renew deadline is a loss, not a renewal.
      assertThat(renewals.max(TimeUnit.NANOSECONDS)).isPositive()
          .isLessThan((double) MeteredReplica.RENEW_DEADLINE.toNanos());
      // A leader's last success is its last renewal, sent within the renew deadline (else it would have lost).
      assertThat(Await.holds(() -> a.lastSuccessAgeSeconds() < seconds(MeteredReplica.RENEW_DEADLINE))).isTrue();
    }
  }

  @Test
  void cuttingTheLeadersLinkCountsRenewFailuresUntilItStopsLeading() throws Exception {
    api.assumeEmbedded();
    try (MeteredReplica a = MeteredReplica.startLeader(api, "a")) {
      assertThat(Await.holds(() -> a.renewals() >= 1)).isTrue();

      a.link.refuseConnections();

      assertThat(Await.holds(() -> a.renewFailures() >= 1)).as("renew failures counted").isTrue();
      assertThat(Await.holds(() -> a.masterStatus() == 0)).as("lost at the renew deadline").isTrue();
      assertThat(Await.holds(() -> a.lastSuccessAgeSeconds() > seconds(MeteredReplica.RENEW_DEADLINE)))
          .as("no Lease call succeeds while cut off").isTrue();
      assertThat(a.transitions()).isEqualTo(1);

      a.link.heal();

      assertThat(Await.holds(() -> a.masterStatus() == 1)).as("leads again once healed (RECONTEND)").isTrue();
      assertThat(Await.holds(() -> a.transitions() == 2)).isTrue();
      assertThat(Await.holds(() -> a.lastSuccessAgeSeconds() < seconds(MeteredReplica.RENEW_DEADLINE))).isTrue();
    }
  }

  @Test
  void anUnelectedRunnerShowsWhyInTheDecisionTagsAndIsNotMaster() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    try (ElectionRunner runner = metrics.start(ElectionRunner.builder()
        .decision(MeteredReplica.KILL_SWITCH_OFF)
        .settings(LeaseSettings.builder().leaseName(MeteredReplica.LEASE).build())
        .service(LeaderService.of(term -> { }, () -> { })))) {

      Gauge decision = registry.get(ElectionMetrics.DECISION).gauge();
      assertThat(decision.getId().getTag(ElectionMetrics.TAG_OUTCOME)).isEqualTo("RUN_UNELECTED");
      assertThat(decision.getId().getTag(ElectionMetrics.TAG_REASONS)).isEqualTo("KILL_SWITCH_OFF");
      assertThat(registry.get(ElectionMetrics.MASTER_STATUS).gauge().value()).isZero();
      assertThat(registry.find(ElectionMetrics.LAST_SUCCESS_AGE).meters()).as("no Lease calls at all").isEmpty();
      assertThat(registry.scrape())
          .contains("leader_election_decision_info{name=\"orders-controller\",namespace=\"\",outcome=\"RUN_UNELECTED\","
              + "reasons=\"KILL_SWITCH_OFF\"} 1")
          .contains("leader_election_master_status{name=\"orders-controller\",namespace=\"\"} 0.0");
      assertThat(runner.state().kind().name()).isEqualTo("NOT_CONTENDING");
    }
  }

  @Test
  void anUnelectedRunnerWithoutSettingsHasEmptyLeaseTags() {
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    try (ElectionRunner runner = metrics.start(ElectionRunner.builder()
        .decision(MeteredReplica.KILL_SWITCH_OFF)
        .service(LeaderService.of(term -> { }, () -> { })))) {

      assertThat(registry.get(ElectionMetrics.DECISION).tags(Tags.of("name", "", "namespace", "")).gauge().value())
          .isEqualTo(1);
    }
  }

  private static double seconds(java.time.Duration duration) {
    return duration.toNanos() / 1e9;
  }
}
