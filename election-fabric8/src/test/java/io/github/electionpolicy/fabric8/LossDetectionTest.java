package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A leader sees its loss when its renew deadline passes, and an exit after a loss never waits twice. */
class LossDetectionTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void leaderWhoseRetryPeriodOutlastsItsDeadlineStopsAtTheDeadlineNotAtTheNextAttempt() throws Exception {
    // After a failed attempt, the next one would come 4.8 s after the last renewal, 1.8 s past the deadline.
    LeaseSettings slowRetries = MockApi.fastSettings("a").leaseDuration(Duration.ofSeconds(4))
        .renewDeadline(Duration.ofSeconds(3)).retryPeriod(Duration.ofMillis(2400)).build();
    ReplicaLink proxy = api.proxy();
    try (Replica a = Replica.start("a", api.client(proxy.url()), slowRetries, log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
      LeadershipTerm term = a.runner.currentTerm().orElseThrow();

      long cut = System.nanoTime();
      proxy.refuseConnections();
      assertThat(Replica.awaitTrue(() -> !term.isValid(), Duration.ofSeconds(8))).isTrue();
      long invalid = System.nanoTime();
      Optional<ServiceLog.Entry> stopped = log.await("a", ServiceLog.Kind.STOP, cut, Duration.ofSeconds(5));

      assertThat(stopped).isPresent();
      assertThat(Duration.ofNanos(stopped.get().nanos() - invalid)).isLessThan(Duration.ofMillis(800));
    }
  }

  @Test
  void closeFromAShutdownHookAfterAnExitWhoseStopTimedOutDoesNotWaitASecondTime() throws Exception {
    Duration stopTimeout = Duration.ofSeconds(2);
    CountDownLatch releaseHungStop = new CountDownLatch(1);
    AtomicReference<ElectionRunner> runnerRef = new AtomicReference<>();
    List<Duration> closeTook = new CopyOnWriteArrayList<>();
    LeaseSettings settings = MockApi.fastSettings("a").stopTimeout(stopTimeout)
        .lossPolicy(LossPolicy.exit(status -> {
          long before = System.nanoTime();
          runnerRef.get().close();
          closeTook.add(Duration.ofNanos(System.nanoTime() - before));
        }))
        .build();
    ReplicaLink proxy = api.proxy();
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client(proxy.url()))
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(LeaderService.of(term -> { }, () -> {
          try {
            releaseHungStop.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }))
        .start();
    runnerRef.set(runner);
    try {
      assertThat(Replica.awaitTrue(() -> runner.state().kind() == ElectionState.Kind.LEADING,
          Duration.ofSeconds(5))).isTrue();

      proxy.refuseConnections();

      assertThat(runner.awaitStopped(MockApi.RENEW_DEADLINE.plus(stopTimeout).plusSeconds(5))).isTrue();
      // close() inside the exiter marks the runner stopped before the exiter itself records the time.
      assertThat(Replica.awaitTrue(() -> closeTook.size() == 1, Duration.ofSeconds(5))).isTrue();
      assertThat(closeTook).hasSize(1);
      assertThat(closeTook.get(0)).isLessThan(stopTimeout.dividedBy(2));
    } finally {
      releaseHungStop.countDown();
      runner.close();
    }
  }
}
