package io.github.electionpolicy.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.FailingElection;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The meters do not lie: a listener of the application's that throws does not hide an event from the binder, a
 * runner that replaces a closed one for the same Lease is measured, and a leader whose election logic failed is
 * not master while its services stop. (From the adversarial review of election-micrometer.)
 */
// A runner opened in try-with-resources is often there only to be closed.
@SuppressWarnings("try")
class MeterAccuracyTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private ElectionRunner.Builder contending(String identity) {
    return ElectionRunner.builder()
        .client(api.replica(identity).client())
        .decision(MeteredReplica.CONTEND)
        .settings(MeteredReplica.fastSettings(api.namespace(), identity))
        .service(LeaderService.of(term -> { }, () -> { }));
  }

  private static boolean leads(ElectionRunner runner) {
    return runner.state().kind() == ElectionState.Kind.LEADING;
  }

  /**
   * Attack: the binder's listener is the last on the builder (start() adds it), and the runner delivered each
   * event to its listeners in one task that caught only RuntimeException. A listener of the application's
   * that throws an Error (a NoClassDefFoundError from a metrics or logging library missing at run time, an
   * AssertionError) ended the task: every listener after it, the binder's included, missed the event, so
   * {@code leader_election_transitions_total} stayed 0 for a replica that leads, and the Error bypassed the
   * runner's log. ElectionListener promised that a listener's failure is logged and ignored.
   */
  @Test
  void aListenerThatThrowsAnErrorDoesNotHideTheEventFromTheBinder() throws Exception {
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    ElectionListener broken = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        throw new NoClassDefFoundError("io/example/MissingMetricsLibrary");
      }
    };
    try (ElectionRunner runner = metrics.start(contending("a").listener(broken))) {
      assertThat(Await.holds(() -> leads(runner))).isTrue();

      assertThat(Await.holds(() -> registry.get(ElectionMetrics.TRANSITIONS).functionCounter().count() == 1))
          .as("the term won is counted whatever another listener throws").isTrue();
    }
  }

  /**
   * Attack: meters were never removed, and a binder that found a meter with its name and tags already in the
   * registry registered nothing. A closed runner's meters stayed in the registry for good (its gauges held the
   * runner strongly), so the binder of the runner that replaced it for the same Lease in the same process (a
   * lifecycle stopped and started again, a new runner after a loss handler returned STOP) registered nothing
   * and logged a WARN that blamed "another ElectionMetrics for the same Lease": the registry kept reporting
   * the closed runner, {@code leader_election_master_status} 0 while the new runner led, its transitions,
   * failures and renewals never counted.
   *
   * <p>Fixed: a closed runner's meters leave every registry when it stops, and a running runner's binder
   * takes the place of a stopped runner's meters (ElectionMetricsLifecycleTest has the rules).
   */
  @Test
  void aRunnerThatReplacesAClosedOneForTheSameLeaseIsMeasured() throws Exception {
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics first = new ElectionMetrics();
    first.bindTo(registry);
    ElectionRunner closed = first.start(contending("a"));
    assertThat(Await.holds(() -> leads(closed))).isTrue();
    closed.close();
    assertThat(closed.awaitStopped(Await.GENEROUS)).isTrue();

    ElectionMetrics second = new ElectionMetrics();
    second.bindTo(registry);
    try (ElectionRunner next = second.start(contending("a"))) {
      assertThat(Await.holds(() -> leads(next))).isTrue();

      assertThat(Await.holds(() -> registry.get(ElectionMetrics.MASTER_STATUS).gauge().value() == 1))
          .as("master status of the runner that leads now").isTrue();
      assertThat(Await.holds(() -> registry.get(ElectionMetrics.RENEW_DURATION).timer().count() >= 1))
          .as("its renewals").isTrue();
    }
  }

  /**
   * Attack: whatever ends the runner's election (an Error in its election logic; the old runner's equivalent was
   * an interrupt of its Lease thread) ends the term at once, but the old runner published no change of state until
   * its services had stopped: a loss publishes FOLLOWING before stopping them, the death of the loop did not.
   * While a service's stop() takes its time the runner stayed LEADING and {@code leader_election_master_status}
   * stayed 1, although nobody renews the Lease: once it expires the follower takes over, and two replicas report
   * 1 ({@code LeaderElectionTwoLeaders} fires for a replica that leads nothing). The runner has no thread of its
   * own any more, so the failure is an OutOfMemoryError thrown on its loop while it renews
   * ({@link io.github.electionpolicy.fabric8.FailingElection}).
   */
  @Test
  void aLeaderWhoseElectionLogicFailedIsNotMasterWhileItsServicesStop() throws Exception {
    CountDownLatch stopMayReturn = new CountDownLatch(1);
    AtomicBoolean failRenewals = new AtomicBoolean();
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    ElectionRunner a = metrics.start(FailingElection.failRenewalsWhen(ElectionRunner.builder(),
            api.replica("a").client(), api.namespace(), MeteredReplica.fastSettings(api.namespace(), "a"),
            failRenewals::get)
        .decision(MeteredReplica.CONTEND)
        .service(LeaderService.of(term -> { }, () -> {
          try {
            stopMayReturn.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        })));
    assertThat(Await.holds(() -> leads(a))).isTrue();
    try (MeteredReplica b = MeteredReplica.start(api, "b")) {
      assertThat(Await.holds(() -> b.runner.state().kind() == ElectionState.Kind.FOLLOWING)).isTrue();

      failRenewals.set(true);

      assertThat(Await.holds(() -> b.masterStatus() == 1)).as("b took over the Lease nobody renews").isTrue();
      assertThat(Await.holds(() -> registry.get(ElectionMetrics.MASTER_STATUS).gauge().value() == 0))
          .as("a leads nothing: its term ended when its election failed").isTrue();
    } finally {
      stopMayReturn.countDown();
      a.close();
    }
  }
}
