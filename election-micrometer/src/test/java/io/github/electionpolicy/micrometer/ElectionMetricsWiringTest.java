package io.github.electionpolicy.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.github.electionpolicy.testsupport.LogCapture;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The ways to wire the binder, right and wrong: each wrong one fails loudly or says so in the log. */
// A runner opened in try-with-resources is often there only to be closed.
@SuppressWarnings("try")
class ElectionMetricsWiringTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private ElectionRunner.Builder contending(String identity) {
    return ElectionRunner.builder()
        .client(api.replica(identity).client())
        .decision(MeteredReplica.CONTEND)
        .settings(MeteredReplica.fastSettings(api.namespace(), identity));
  }

  private static LeaderService idle() {
    return LeaderService.of(term -> { }, () -> { });
  }

  @Test
  void aRegistryBoundAfterTheStartGetsTheSameMetersAndEveryCount() throws Exception {
    MeterRegistry before = new SimpleMeterRegistry();
    MeterRegistry after = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(before);
    try (ElectionRunner runner = metrics.start(contending("a").service(idle()))) {
      assertThat(Await.holds(() -> before.get(ElectionMetrics.MASTER_STATUS).gauge().value() == 1)).isTrue();
      // The state is the runner's own; the count follows on its listener thread.
      assertThat(Await.holds(() -> before.get(ElectionMetrics.TRANSITIONS).functionCounter().count() == 1))
          .isTrue();

      metrics.bindTo(after);

      assertThat(after.get(ElectionMetrics.MASTER_STATUS).gauge().value()).isEqualTo(1);
      assertThat(after.get(ElectionMetrics.TRANSITIONS).functionCounter().count())
          .as("counted before the registry was bound").isEqualTo(1);
      assertThat(after.getMeters()).hasSameSizeAs(before.getMeters());
      // The timer of a registry bound later sees the renewals from then on.
      assertThat(Await.holds(() -> after.get(ElectionMetrics.RENEW_DURATION).timer().count() >= 1)).isTrue();
    }
  }

  @Test
  void aRegistryBoundTwiceRecordsEachRenewalOnce() throws Exception {
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    metrics.bindTo(registry);
    try (ElectionRunner runner = metrics.start(contending("a").service(idle()))) {
      metrics.bindTo(registry);
      Timer timer = registry.get(ElectionMetrics.RENEW_DURATION).timer();
      assertThat(Await.holds(() -> timer.count() >= 3)).isTrue();

      runner.close();
      assertThat(runner.awaitStopped(Await.GENEROUS)).as("listener events delivered").isTrue();

      // Each renewal is an update of the Lease the server accepted after the one that took it (one whose
      // answer came too late is a failure, not a renewal): counted twice, they would outnumber those writes.
      // (The timer left the registry with the closed runner; it still holds its count.)
      long renewals = timer.count();
      long writesByA = api.leaseWrites(MeteredReplica.LEASE).stream()
          .filter(write -> write.holder().equals("a")).count();
      assertThat(renewals).isGreaterThanOrEqualTo(3).isLessThanOrEqualTo(writesByA - 1);
    }
  }

  @Test
  void oneBinderMeasuresOneRunner() {
    ElectionMetrics metrics = new ElectionMetrics();
    try (ElectionRunner first = metrics.start(contending("a").service(idle()))) {
      ElectionRunner.Builder second = contending("b").service(idle());

      assertThatThrownBy(() -> metrics.start(second))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("already measures the runner a (" + api.namespace() + "/orders-controller), "
              + "which has not stopped")
          .hasMessageContaining("fix: create a new ElectionMetrics");
      assertThat(metrics.toString()).contains("the runner a");
    }
  }

  @Test
  void aStartThatFailedMayBeRetriedWithTheSameBuilderWithoutCountingTwice() throws Exception {
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    ElectionRunner.Builder builder = contending("a");

    assertThatThrownBy(() -> metrics.start(builder)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no service");
    assertThat(registry.getMeters()).as("no runner, no meters").isEmpty();

    try (ElectionRunner runner = metrics.start(builder.service(idle()))) {
      assertThat(Await.holds(() -> registry.get(ElectionMetrics.MASTER_STATUS).gauge().value() == 1)).isTrue();
      assertThat(Await.holds(() -> registry.get(ElectionMetrics.RENEW_DURATION).timer().count() >= 2)).isTrue();

      assertThat(registry.get(ElectionMetrics.TRANSITIONS).functionCounter().count())
          .as("the listener was added to the builder once").isEqualTo(1);
    }
  }

  @Test
  void aStartWhoseServiceFailedRunningUnelectedNeedsANewBuilder() throws Exception {
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    RuntimeException failure = new RuntimeException("port 8443 in use");
    ElectionRunner.Builder failing = ElectionRunner.builder()
        .decision(MeteredReplica.KILL_SWITCH_OFF)
        .service(LeaderService.of(term -> {
          throw failure;
        }, () -> { }));
    assertThatThrownBy(() -> metrics.start(failing)).isInstanceOf(IllegalStateException.class).hasRootCause(failure);

    assertThatThrownBy(() -> metrics.start(failing)).isInstanceOf(IllegalStateException.class)
        .as("the builder started a runner, which stopped at once").hasMessageContaining("already started a runner");
    assertThat(registry.getMeters()).as("no runner for the binder, no meters").isEmpty();

    try (ElectionRunner runner = metrics.start(ElectionRunner.builder()
        .decision(MeteredReplica.KILL_SWITCH_OFF)
        .service(idle()))) {
      assertThat(registry.get(ElectionMetrics.DECISION).gauge().value()).isEqualTo(1);
    }
  }

  @Test
  void aBuilderLeftBehindByAFailedStartCountsNothingIfStartedElsewhere() throws Exception {
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    ElectionRunner.Builder abandoned = ElectionRunner.builder()
        .client(api.replica("other").client())
        .decision(MeteredReplica.CONTEND)
        .settings(LeaseSettings.builder().leaseName("other-controller").namespace(api.namespace())
            .identity("other").lossPolicy(LossPolicy.recontend()).build());
    assertThatThrownBy(() -> metrics.start(abandoned)).hasMessageContaining("no service");

    try (ElectionRunner measured = metrics.start(contending("a").service(idle()));
        ElectionRunner other = abandoned.service(idle()).start()) {
      assertThat(Await.holds(() -> other.state().kind().name().equals("LEADING")
          && measured.state().kind().name().equals("LEADING"))).isTrue();
      assertThat(Await.holds(() -> registry.get(ElectionMetrics.TRANSITIONS).functionCounter().count() == 1))
          .isTrue();

      other.close();
      assertThat(other.awaitStopped(Await.GENEROUS)).as("its listener events delivered").isTrue();

      assertThat(registry.get(ElectionMetrics.TRANSITIONS).functionCounter().count())
          .as("only the measured runner's term, not the other runner's").isEqualTo(1);
    }
  }

  @Test
  void twoBindersForOneLeaseInOneRegistryKeepTheFirstAndSaySo() throws Exception {
    MeterRegistry shared = new SimpleMeterRegistry();
    ElectionMetrics first = new ElectionMetrics();
    ElectionMetrics second = new ElectionMetrics();
    first.bindTo(shared);
    try (ElectionRunner a = first.start(contending("a").service(idle()));
        ElectionRunner b = second.start(contending("b").service(idle()));
        LogCapture log = new LogCapture()) {

      second.bindTo(shared);

      assertThat(log.text()).contains("Not registering the election metrics of the runner b")
          .contains("fix: give each ElectionMetrics an extra tag");
      assertThat(shared.find(ElectionMetrics.MASTER_STATUS).meters()).hasSize(1);
    }
  }

  @Test
  void anExtraTagTellsTwoRunnersForOneLeaseApartInOneRegistry() throws Exception {
    MeterRegistry shared = new SimpleMeterRegistry();
    ElectionMetrics metricsOfA = new ElectionMetrics(Tags.of("replica", "a"));
    ElectionMetrics metricsOfB = new ElectionMetrics(Tags.of("replica", "b"));
    metricsOfA.bindTo(shared);
    metricsOfB.bindTo(shared);
    try (ElectionRunner a = metricsOfA.start(contending("a").service(idle()));
        ElectionRunner b = metricsOfB.start(contending("b").service(idle()))) {
      assertThat(Await.holds(() -> shared.find(ElectionMetrics.MASTER_STATUS).gauges().stream()
          .mapToDouble(gauge -> gauge.value()).sum() == 1)).as("exactly one of the two leads").isTrue();

      assertThat(shared.find(ElectionMetrics.MASTER_STATUS).gauges()).extracting(g -> g.getId().getTag("replica"))
          .containsExactlyInAnyOrder("a", "b");
    }
  }

  @Test
  void extraTagsMayNotUseTheBindersOwnKeys() {
    for (String key : List.of("name", "namespace", "outcome", "reasons")) {
      assertThatThrownBy(() -> new ElectionMetrics(Tags.of(key, "x", "replica", "a")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("extraTags=[")
          .hasMessageContaining(key + "=x")
          .hasMessageContaining("are set by ElectionMetrics itself")
          .hasMessageContaining("fix: use another key");
    }
  }

  @Test
  void untilTheRunnerStartsABoundRegistryHasNoMeters() {
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();

    metrics.bindTo(registry);

    assertThat(registry.getMeters()).isEmpty();
    assertThat(metrics.toString()).isEqualTo("ElectionMetrics{not started, 1 registry}");
  }
}
