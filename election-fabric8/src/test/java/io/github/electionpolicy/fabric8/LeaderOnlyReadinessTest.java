package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Under {@link Readiness#LEADER_ONLY} a leader is ready only while its services run under a valid term: not while
 * they still start, not once a close ended the term. (From the adversarial review of the start-up, settings and
 * health changes.)
 */
class LeaderOnlyReadinessTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  // ---- finding 4 of the review of the start-up, settings and health changes --------------------------

  /**
   * Attack: Readiness.LEADER_ONLY exists "for a Service that must route to the leader" (a webhook, an API served
   * by the leader's LeaderService). health() calls a contending runner ready as soon as the state is LEADING,
   * and LEADING is published before the services are even submitted (startLater runs them on the reconciler
   * thread). So the leader is ready, and gets the traffic, while its service's start() is still running (a
   * server not yet bound, caches not warm) and also while a start() that will fail runs. The unelected runner
   * does wait for its services (control.started()); the elected one does not.
   *
   * <p>Fix: under LEADER_ONLY (at least) require control.started() for the current term, as the unelected
   * branch does.
   */
  @Test
  void leaderOnlyReadinessWaitsUntilTheLeadersServicesStarted() throws Exception {
    CountDownLatch inStart = new CountDownLatch(1);
    CountDownLatch letStartReturn = new CountDownLatch(1);
    LeaderService webhookServer = LeaderService.of(term -> {
      inStart.countDown();
      try {
        letStartReturn.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, () -> { });
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(webhookServer)
        .readiness(Readiness.LEADER_ONLY)
        .start();
    try {
      assertThat(inStart.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(runner.state().kind()).isEqualTo(ElectionState.Kind.LEADING);

      assertThat(runner.health().ready()).as("ready while the leader's only service is still starting").isFalse();
    } finally {
      letStartReturn.countDown();
      runner.close();
    }
  }

  // ---- finding 5 of the review of the start-up, settings and health changes --------------------------

  /**
   * Attack: close() ends the term at once and then stops the services (up to stopTimeout) and releases; the
   * state stays LEADING until the very end of stopThenRelease, and the leader keeps renewing meanwhile, so under
   * LEADER_ONLY the closing leader stays ready (traffic keeps coming) while its services are stopping or
   * stopped under an ended term. The same rule keeps it ready after its release was written, until STOPPED is
   * published: a new leader that is elected in that window (any stall of the closing thread between the release
   * and STOPPED) makes two replicas ready at once under LEADER_ONLY.
   *
   * <p>Fix: health() is not ready once the runner is closing (or once the current term has ended), whatever the
   * state; or publish a non-leading state when close() ends the term.
   */
  @Test
  void aClosingLeaderIsNotReadyOnceItsTermEnded() throws Exception {
    CountDownLatch inStop = new CountDownLatch(1);
    CountDownLatch letStopReturn = new CountDownLatch(1);
    AtomicReference<LeadershipTerm> term = new AtomicReference<>();
    LeaderService webhookServer = LeaderService.of(term::set, () -> {
      inStop.countDown();
      try {
        letStopReturn.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").stopTimeout(Duration.ofSeconds(5)).build())
        .service(webhookServer)
        .readiness(Readiness.LEADER_ONLY)
        .start();
    Thread closer = new Thread(runner::close);
    try {
      assertThat(Replica.awaitTrue(() -> term.get() != null, Duration.ofSeconds(5))).isTrue();
      closer.start();
      assertThat(inStop.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(api.awaitWrites("a", 2)).as("the closing leader renews meanwhile").isTrue();

      assertThat(term.get().isValid()).isFalse();
      assertThat(runner.health().ready()).as("ready although closing, its term ended and its service stopping")
          .isFalse();
    } finally {
      letStopReturn.countDown();
      closer.join(10_000);
    }
  }
}
