package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** LeaderService callbacks that close the runner never let two replicas run at once, nor stop anything twice. */
class ServiceCallbacksTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void closeFromTheFirstReconcilersStartReleasesOnlyAfterItStoppedAndNeverStartsTheSecond() throws Exception {
    AtomicReference<ElectionRunner> runnerOfA = new AtomicReference<>();
    CountDownLatch followerReady = new CountDownLatch(1);
    LeaderService first = log.service("a");
    LeaderService closesInStart = new LeaderService() {
      @Override
      public void start(LeadershipTerm term) throws Exception {
        first.start(term);
        followerReady.await();
        runnerOfA.get().close();
      }

      @Override
      public void stop() throws Exception {
        first.stop();
      }
    };
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(closesInStart)
        .service(log.service("a"))
        .start();
    runnerOfA.set(a);
    assertThat(Replica.awaitTrue(() -> a.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(5)))
        .isTrue();
    try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
          Duration.ofSeconds(5))).isTrue();

      followerReady.countDown();
      Optional<ServiceLog.Entry> takeover = log.await("b", ServiceLog.Kind.START, 0, Duration.ofSeconds(5));
      assertThat(a.awaitStopped(Duration.ofSeconds(5))).isTrue();
      assertThat(api.awaitWrites("b", 2)).as("b leads on").isTrue();

      assertThat(takeover).as("b takes over once a released the Lease").isPresent();
      assertThat(log.of("a", ServiceLog.Kind.START)).as("only the reconciler that closed started").hasSize(1);
      assertThat(log.of("a", ServiceLog.Kind.STOP)).hasSize(1);
      assertThat(log.overlap()).isEmpty();
    } finally {
      a.close();
    }
  }

  @Test
  void closeFromASecondReconcilersStopDuringALossStopsEachReconcilerOnce() throws Exception {
    AtomicReference<ElectionRunner> runnerRef = new AtomicReference<>();
    java.util.List<String> stops = new java.util.concurrent.CopyOnWriteArrayList<>();
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(LeaderService.of(term -> { }, () -> stops.add("first")))
        .service(LeaderService.of(term -> { }, () -> {
          stops.add("second");
          runnerRef.get().close();
        }))
        .start();
    runnerRef.set(runner);
    try {
      assertThat(Replica.awaitTrue(() -> runner.state().kind() == ElectionState.Kind.LEADING,
          Duration.ofSeconds(5))).isTrue();

      api.takeLeaseAs("intruder");

      assertThat(runner.awaitStopped(Duration.ofSeconds(5))).isTrue();
      // Must wait: the check is that no third stop comes after the runner stopped, and nothing marks that time.
      Thread.sleep(MockApi.RETRY_PERIOD.toMillis());
      assertThat(stops).containsExactly("second", "first");
      assertThat(runner.state()).as("closed during the loss").isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
    } finally {
      runner.close();
    }
  }
}
