package io.github.electionpolicy.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossHandler;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import io.github.electionpolicy.testsupport.LogCapture;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What becomes of a runner's meters when it stops: a closed runner's leave every registry; one that stopped
 * on its own keeps them until the runner that replaces it takes its place; of two running runners for one
 * Lease in one registry the second takes the place of the first once that one stopped.
 */
// A runner opened in try-with-resources is often there only to be closed.
@SuppressWarnings("try")
class ElectionMetricsLifecycleTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private ElectionRunner.Builder contending(String identity) {
    return contending(identity, MeteredReplica.fastSettings(api.namespace(), identity));
  }

  private ElectionRunner.Builder contending(String identity, LeaseSettings settings) {
    return contending(api.replica(identity), settings);
  }

  private static ElectionRunner.Builder contending(ReplicaLink link, LeaseSettings settings) {
    return ElectionRunner.builder()
        .client(link.client())
        .decision(MeteredReplica.CONTEND)
        .settings(settings)
        .service(LeaderService.of(term -> { }, () -> { }));
  }

  private static boolean leads(ElectionRunner runner) {
    return runner.state().kind() == ElectionState.Kind.LEADING;
  }

  /**
   * A listener that holds the STOPPED event until {@code latch} opens. It runs before the binder's own listener
   * (start() adds that one last), so the binder hears the stop only then.
   */
  private static ElectionListener slowToHearTheStop(CountDownLatch latch) {
    return new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          try {
            latch.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    };
  }

  private static double masterStatus(MeterRegistry registry) {
    return registry.get(ElectionMetrics.MASTER_STATUS).gauge().value();
  }

  private static int masterStatusMeters(MeterRegistry registry) {
    return registry.find(ElectionMetrics.MASTER_STATUS).meters().size();
  }

  @Test
  void aClosedRunnersMetersLeaveEveryRegistryItWasBoundTo() throws Exception {
    MeterRegistry first = new SimpleMeterRegistry();
    MeterRegistry second = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(first);
    metrics.bindTo(second);
    ElectionRunner runner = metrics.start(contending("a"));
    assertThat(Await.holds(() -> masterStatus(first) == 1 && masterStatus(second) == 1)).isTrue();

    runner.close();
    assertThat(runner.awaitStopped(Await.GENEROUS)).isTrue();

    assertThat(first.getMeters()).as("removed by the time awaitStopped() returns").isEmpty();
    assertThat(second.getMeters()).isEmpty();
    assertThat(metrics.toString()).contains("the runner a").contains("stopped, meters removed");

    MeterRegistry later = new SimpleMeterRegistry();
    metrics.bindTo(later);
    assertThat(later.getMeters()).as("a closed runner is measured nowhere").isEmpty();
  }

  @Test
  void aClosedRunnersMetersLeaveACompositeRegistryAndItsChildren() throws Exception {
    // Spring Boot binds to a composite when the application exports to several systems.
    MeterRegistry child = new SimpleMeterRegistry();
    CompositeMeterRegistry composite = new CompositeMeterRegistry().add(child);
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(composite);
    ElectionRunner runner = metrics.start(contending("a"));
    assertThat(Await.holds(() -> masterStatus(child) == 1)).isTrue();

    runner.close();
    assertThat(runner.awaitStopped(Await.GENEROUS)).isTrue();

    assertThat(composite.getMeters()).isEmpty();
    assertThat(child.getMeters()).isEmpty();
  }

  @Test
  void anUnelectedRunnersMetersLeaveWhenItIsClosed() throws Exception {
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    ElectionRunner runner = metrics.start(ElectionRunner.builder()
        .decision(MeteredReplica.KILL_SWITCH_OFF)
        .service(LeaderService.of(term -> { }, () -> { })));
    assertThat(registry.get(ElectionMetrics.DECISION).gauge().value()).isEqualTo(1);

    runner.close();
    assertThat(runner.awaitStopped(Await.GENEROUS)).isTrue();

    assertThat(registry.getMeters()).isEmpty();
  }

  /**
   * A registry that refuses one of the meters (Prometheus's does, for a name another meter registered with other tag
   * keys) made start() throw after the runner had started: nobody held the runner, so it went on running, its
   * services with it, in an application whose start failed.
   */
  @Test
  void aRegistryThatRefusesAMeterFailsTheStartAndTheRunnerItStartedIsClosed() {
    MeterRegistry refusing = new SimpleMeterRegistry();
    refusing.config().meterFilter(new io.micrometer.core.instrument.config.MeterFilter() {
      @Override
      public io.micrometer.core.instrument.Meter.Id map(io.micrometer.core.instrument.Meter.Id id) {
        if (id.getName().equals(ElectionMetrics.DECISION)) {
          throw new IllegalArgumentException("a meter named " + id.getName() + " exists with other tag keys");
        }
        return id;
      }
    });
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(refusing);
    CountDownLatch stopped = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> metrics.start(ElectionRunner.builder()
        .decision(MeteredReplica.KILL_SWITCH_OFF)
        .service(LeaderService.of(term -> started.set(true), stopped::countDown))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("other tag keys");
    assertThat(started).as("the runner had started its service").isTrue();
    assertThat(stopped.getCount()).as("the service stopped: the runner was closed before start() threw").isZero();
    assertThat(refusing.getMeters()).as("no meter of the runner left behind").isEmpty();
  }

  @Test
  void aRunnerThePreflightStoppedKeepsMetersThatSayItLeadsNothingAndIsOutOfTouch() throws Exception {
    api.assumeEmbedded();
    api.denyAccess(Set.of("update"));
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    ElectionRunner runner = metrics.start(contending("a"));
    assertThat(runner.awaitStopped(Await.GENEROUS)).isTrue();
    assertThat(runner.startupFailure()).isPresent();
    assertThat(runner.isClosed()).as("stopped on its own").isFalse();

    assertThat(masterStatus(registry)).isZero();
    assertThat(registry.get(ElectionMetrics.DECISION).gauge().getId().getTag(ElectionMetrics.TAG_OUTCOME))
        .isEqualTo("CONTEND");
    double age = registry.get(ElectionMetrics.LAST_SUCCESS_AGE).gauge().value();
    assertThat(Await.holds(() -> registry.get(ElectionMetrics.LAST_SUCCESS_AGE).gauge().value() > age))
        .as("no Lease call ever succeeded: the age keeps growing, so LeaderElectionOutOfTouch fires").isTrue();
    assertThat(metrics.toString()).contains("the runner a").contains(", stopped,");
    MeterRegistry later = new SimpleMeterRegistry();
    metrics.bindTo(later);
    assertThat(later.getMeters()).as("a registry bound later gets them too").hasSize(6);

    runner.close();

    assertThat(registry.getMeters()).as("closing a stopped runner reports nothing; the meters stay").hasSize(6);
  }

  @Test
  void theRunnerThatReplacesOneThatStoppedOnItsOwnTakesItsPlaceAndItsMetersLeaveEveryRegistry()
      throws Exception {
    api.assumeEmbedded();
    api.denyAccess(Set.of("update"));
    MeterRegistry shared = new SimpleMeterRegistry();
    MeterRegistry onlyTheOld = new SimpleMeterRegistry();
    ElectionMetrics denied = new ElectionMetrics();
    denied.bindTo(shared);
    denied.bindTo(onlyTheOld);
    ElectionRunner stopped = denied.start(contending("a"));
    assertThat(stopped.awaitStopped(Await.GENEROUS)).isTrue();
    assertThat(onlyTheOld.getMeters()).hasSize(6);
    api.denyAccess(Set.of());

    ElectionMetrics replacing = new ElectionMetrics();
    try (LogCapture log = new LogCapture()) {
      replacing.bindTo(shared);
      try (ElectionRunner next = replacing.start(contending("a"))) {
        assertThat(Await.holds(() -> leads(next))).isTrue();

        assertThat(Await.holds(() -> masterStatus(shared) == 1)).as("the new runner's master status").isTrue();
        assertThat(masterStatusMeters(shared)).isEqualTo(1);
        assertThat(Await.holds(() -> shared.get(ElectionMetrics.RENEW_DURATION).timer().count() >= 1))
            .as("its renewals").isTrue();
        assertThat(onlyTheOld.getMeters()).as("the replaced runner is measured nowhere").isEmpty();
        assertThat(log.text()).as("replacing a stopped runner is no conflict").doesNotContain("Not registering");
      }
    }
  }

  @Test
  void aReplacementThatBindsBeforeTheClosedRunnersBinderHeardOfTheStopStillTakesItsPlace() throws Exception {
    MeterRegistry registry = new SimpleMeterRegistry();
    // Common tags (as Spring Boot's management.metrics.tags adds) change the ids the registry keeps.
    registry.config().commonTags("application", "orders");
    CountDownLatch stopMayBeHeard = new CountDownLatch(1);
    ElectionMetrics first = new ElectionMetrics();
    first.bindTo(registry);
    ElectionRunner closed = first.start(contending("a").listener(slowToHearTheStop(stopMayBeHeard)));
    try {
      assertThat(Await.holds(() -> masterStatus(registry) == 1)).isTrue();
      closed.close();
      assertThat(closed.state().kind()).isEqualTo(ElectionState.Kind.STOPPED);

      ElectionMetrics second = new ElectionMetrics();
      second.bindTo(registry);
      try (ElectionRunner next = second.start(contending("a"))) {
        assertThat(Await.holds(() -> leads(next))).isTrue();
        assertThat(Await.holds(() -> masterStatus(registry) == 1)).as("the new runner's").isTrue();

        stopMayBeHeard.countDown();
        assertThat(closed.awaitStopped(Await.GENEROUS)).as("the first binder heard the stop").isTrue();

        assertThat(masterStatusMeters(registry)).isEqualTo(1);
        assertThat(masterStatus(registry)).as("the first binder removed none of the second's meters").isEqualTo(1);
        assertThat(registry.getMeters()).hasSize(6);
      }
    } finally {
      stopMayBeHeard.countDown();
      closed.close();
    }
  }

  @Test
  void aBinderWhoseRunnerWasClosedMeasuresTheNextOneItStarts() throws Exception {
    // A lifecycle stopped and started again: close() returns, and the same binder starts the next runner at
    // once, before its listener may have heard the first one stop.
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    CountDownLatch stopMayBeHeard = new CountDownLatch(1);
    ElectionRunner first = metrics.start(contending("a").listener(slowToHearTheStop(stopMayBeHeard)));
    assertThat(Await.holds(() -> masterStatus(registry) == 1)).isTrue();

    first.close();
    try (ElectionRunner next = metrics.start(contending("a"))) {
      assertThat(Await.holds(() -> leads(next))).isTrue();
      stopMayBeHeard.countDown();
      assertThat(first.awaitStopped(Await.GENEROUS)).as("the first runner's stop was heard").isTrue();

      assertThat(Await.holds(() -> masterStatus(registry) == 1)).as("the next runner's").isTrue();
      assertThat(registry.getMeters()).as("the late stop event removed none of them").hasSize(6);
      long renewals = registry.get(ElectionMetrics.RENEW_DURATION).timer().count();
      assertThat(Await.holds(() -> registry.get(ElectionMetrics.RENEW_DURATION).timer().count() > renewals))
          .as("its renewals").isTrue();
      assertThat(metrics.toString()).contains("running");
    } finally {
      stopMayBeHeard.countDown();
    }
  }

  @Test
  void aBinderWhoseRunnerStoppedOnItsOwnMeasuresTheNextOneInEveryRegistry() throws Exception {
    api.assumeEmbedded();
    api.denyAccess(Set.of("update"));
    MeterRegistry first = new SimpleMeterRegistry();
    MeterRegistry second = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(first);
    metrics.bindTo(second);
    ElectionRunner denied = metrics.start(contending("a"));
    assertThat(denied.awaitStopped(Await.GENEROUS)).isTrue();
    assertThat(first.getMeters()).hasSize(6);
    api.denyAccess(Set.of());

    try (ElectionRunner next = metrics.start(contending("a"))) {
      assertThat(Await.holds(() -> leads(next))).isTrue();

      assertThat(Await.holds(() -> masterStatus(first) == 1 && masterStatus(second) == 1)).isTrue();
      assertThat(first.getMeters()).hasSize(6);
      assertThat(second.getMeters()).hasSize(6);
    }
  }

  @Test
  void ofTwoRunningRunnersForOneLeaseTheSecondTakesTheMetersOnceTheFirstIsClosed() throws Exception {
    MeterRegistry shared = new SimpleMeterRegistry();
    ElectionMetrics first = new ElectionMetrics();
    ElectionMetrics second = new ElectionMetrics();
    first.bindTo(shared);
    second.bindTo(shared);
    try (LogCapture log = new LogCapture();
        ElectionRunner a = first.start(contending("a"))) {
      assertThat(Await.holds(() -> leads(a))).isTrue();
      try (ElectionRunner b = second.start(contending("b"))) {
        assertThat(log.text()).contains("Not registering the election metrics of the runner b")
            .contains("for the runner a (" + api.namespace() + "/orders-controller), which is running")
            .contains("fix: give each ElectionMetrics an extra tag");
        assertThat(masterStatus(shared)).as("a's").isEqualTo(1);

        a.close();
        assertThat(a.awaitStopped(Await.GENEROUS)).isTrue();

        assertThat(masterStatusMeters(shared)).isEqualTo(1);
        assertThat(Await.holds(() -> masterStatus(shared) == 1)).as("b took the Lease and the meters").isTrue();
        assertThat(leads(b)).isTrue();
        assertThat(Await.holds(() -> shared.get(ElectionMetrics.TRANSITIONS).functionCounter().count() == 1))
            .as("b's own count").isTrue();
      }
    }
  }

  @Test
  void ofTwoRunningRunnersForOneLeaseTheSecondTakesTheMetersOnceTheFirstStoppedOnItsOwn() throws Exception {
    api.assumeEmbedded();
    MeterRegistry shared = new SimpleMeterRegistry();
    ElectionMetrics first = new ElectionMetrics();
    ElectionMetrics second = new ElectionMetrics();
    first.bindTo(shared);
    second.bindTo(shared);
    LeaseSettings stopOnLoss = LeaseSettings.builder()
        .leaseName(MeteredReplica.LEASE)
        .namespace(api.namespace())
        .identity("a")
        .leaseDuration(MeteredReplica.LEASE_DURATION)
        .renewDeadline(MeteredReplica.RENEW_DEADLINE)
        .retryPeriod(Duration.ofMillis(200))
        .stopTimeout(Duration.ofSeconds(1))
        .lossPolicy(LossPolicy.custom(lost -> LossHandler.AfterLoss.STOP))
        .build();
    ReplicaLink linkOfA = api.replica("a");
    try (ElectionRunner a = first.start(contending(linkOfA, stopOnLoss))) {
      assertThat(Await.holds(() -> leads(a))).isTrue();
      try (ElectionRunner b = second.start(contending("b"))) {
        assertThat(Await.holds(() -> b.state().kind() == ElectionState.Kind.FOLLOWING)).isTrue();

        linkOfA.refuseConnections();

        assertThat(a.awaitStopped(Await.GENEROUS)).as("a lost the Lease and its policy stopped it").isTrue();
        assertThat(a.isClosed()).isFalse();
        assertThat(Await.holds(() -> leads(b))).isTrue();
        assertThat(Await.holds(() -> masterStatus(shared) == 1)).as("b's meters replaced a's").isTrue();
        assertThat(masterStatusMeters(shared)).isEqualTo(1);
        assertThat(first.toString()).contains("stopped, meters removed");
      }
    }
  }

  @Test
  void theMetersARunnerThatStoppedOnItsOwnLeavesDoNotKeepItAlive() throws Exception {
    api.assumeEmbedded();
    api.denyAccess(Set.of("update"));
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    WeakReference<ElectionRunner> runner = startAndAwaitStopped(metrics);

    assertThat(Await.holds(() -> {
      System.gc();
      return runner.get() == null;
    })).as("the stopped runner was collected").isTrue();
    assertThat(masterStatus(registry)).as("while its meters stay").isZero();
    assertThat(registry.get(ElectionMetrics.LAST_SUCCESS_AGE).gauge().value()).isPositive();
  }

  private WeakReference<ElectionRunner> startAndAwaitStopped(ElectionMetrics metrics) throws InterruptedException {
    ElectionRunner runner = metrics.start(contending("a"));
    assertThat(runner.awaitStopped(Await.GENEROUS)).isTrue();
    return new WeakReference<>(runner);
  }
}
