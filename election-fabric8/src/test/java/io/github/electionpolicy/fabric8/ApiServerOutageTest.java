package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The API server goes away while a replica leads; the loss policy decides what follows. */
class ApiServerOutageTest {

  private static final Duration MARGIN = Duration.ofMillis(700);

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void leaderStopsItsReconcilersWithinTheRenewDeadlineAndExitsOnce() throws Exception {
    List<Integer> exits = new CopyOnWriteArrayList<>();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.exit(exits::add)).build();
    try (Replica a = Replica.start("a", api.client(), settings, log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
      assertThat(a.runner.health().ready()).isTrue();
      assertThat(a.runner.health().live()).isTrue();

      long down = System.nanoTime();
      api.stopServer();
      long notReady = awaitHealth(a, false, true, Duration.ofSeconds(5));
      long notLive = awaitHealth(a, false, false, Duration.ofSeconds(6));
      Optional<ServiceLog.Entry> stopped = log.await("a", ServiceLog.Kind.STOP, down, Duration.ZERO);

      assertThat(stopped).isPresent();
      assertThat(Duration.ofNanos(stopped.get().nanos() - down))
          .isLessThan(MockApi.RENEW_DEADLINE.plus(MARGIN));
      assertThat(notReady - down).isLessThan(notLive - down);
      assertThat(Duration.ofNanos(notLive - down))
          .isLessThan(settings.healthBudget().plus(MARGIN));
      assertThat(a.runner.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.LOST));
      assertThat(a.runner.awaitStopped(Duration.ZERO)).isTrue();
      // Must wait: the check is that no second exit follows the stop, and a stopped runner marks no time.
      Thread.sleep(500);
      assertThat(exits).containsExactly(LossPolicy.LOSS_EXIT_STATUS);
    }
  }

  @Test
  void recontendingLeaderLeadsAgainWhenTheServerReturns() throws Exception {
    ReplicaLink proxy = api.proxy();
    try (Replica a = Replica.start("a", api.client(proxy.url()), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
      LeadershipTerm first = a.runner.currentTerm().orElseThrow();

      long down = System.nanoTime();
      proxy.refuseConnections();
      assertThat(log.await("a", ServiceLog.Kind.STOP, down, MockApi.RENEW_DEADLINE.plus(MARGIN)))
          .isPresent();
      assertThat(first.isValid()).isFalse();
      assertThat(a.runner.state().kind()).isEqualTo(ElectionState.Kind.FOLLOWING);
      assertThat(a.runner.isReady()).isFalse();

      long back = System.nanoTime();
      proxy.heal();
      Optional<ServiceLog.Entry> restarted = log.await("a", ServiceLog.Kind.START, back,
          MockApi.LEASE_DURATION.plus(Duration.ofSeconds(3)));

      assertThat(restarted).isPresent();
      assertThat(restarted.get().term()).isNotSameAs(first);
      assertThat(restarted.get().term().leaseTransitions()).isGreaterThan(first.leaseTransitions());
      assertThat(restarted.get().term().isValid()).isTrue();
      assertThat(a.leads()).isTrue();
      assertThat(a.runner.isReady()).isTrue();
    }
  }

  @Test
  void customLossHandlerIsCalledAfterTheReconcilersStopped() throws Exception {
    ReplicaLink proxy = api.proxy();
    List<String> calls = new CopyOnWriteArrayList<>();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.custom(lostTerm -> {
      calls.add("handler saw " + log.of("a", ServiceLog.Kind.STOP).size() + " stop, term valid="
          + lostTerm.isValid());
      return LossHandler.AfterLoss.STOP;
    })).build();
    try (Replica a = Replica.start("a", api.client(proxy.url()), settings, log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();

      proxy.refuseConnections();

      assertThat(a.runner.awaitStopped(MockApi.RENEW_DEADLINE.plus(Duration.ofSeconds(2)))).isTrue();
      assertThat(calls).containsExactly("handler saw 1 stop, term valid=false");
      assertThat(a.runner.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.LOST));
    }
  }

  /** Polls health until ready (or live) equals {@code expected}; returns the instant it did. */
  private static long awaitHealth(Replica replica, boolean expected, boolean readiness, Duration timeout)
      throws InterruptedException {
    long[] at = new long[1];
    boolean became = Await.holds(() -> {
      ElectionHealth health = replica.runner.health();
      at[0] = System.nanoTime();
      return (readiness ? health.ready() : health.live()) == expected;
    }, timeout);
    if (!became) {
      throw new AssertionError((readiness ? "readiness" : "liveness") + " never became " + expected);
    }
    return at[0];
  }
}
