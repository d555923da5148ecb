package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Attacks on the latest concurrency changes of the runner (final review). */
class FinalReviewAttackTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  /**
   * RECONTEND, a loss whose stop() is slow (still running), and a close() that begins meanwhile: the loss
   * reaction gives up waiting (the runner is closing, NOT_FINISHED) and, since "RECONTEND after a stop() that
   * threw ...", now runs stopForGood itself, reporting STOPPED while close() still waits out its stopTimeout.
   * An awaitStopped() that begins then waits for the reconciler thread, because close() has not yet marked the
   * stop as timed out; once close() gives up on the stop, awaitStopped() must return (its Javadoc: it never
   * waits for a stop() that outlived stopTimeout), but it keeps waiting for as long as stop() hangs.
   */
  @Test
  void awaitStoppedReturnsOnceCloseGaveUpOnAStopHungDuringARecontendLoss() throws Exception {
    closeWhileAStopHangsThenAwaitStopped(() -> api.takeLeaseAs("intruder"));
  }

  /**
   * The same race when the election thread dies (here: interrupted) while leading under RECONTEND: loopDied()
   * stops waiting for the stop once close() began and reported STOPPED at once (stopForGood, then died()'s own
   * stopAfterLoss), so an awaitStopped() begun then waited for the hung stop() (found beside the RECONTEND one;
   * older than it).
   */
  @Test
  void awaitStoppedReturnsOnceCloseGaveUpOnAStopHungAfterTheElectionThreadDied() throws Exception {
    closeWhileAStopHangsThenAwaitStopped(() -> Thread.getAllStackTraces().keySet().stream()
        .filter(thread -> thread.getName().equals("election-lease[" + MockApi.LEASE + ":a]"))
        .filter(Thread::isAlive)
        .forEach(Thread::interrupt));
  }

  private void closeWhileAStopHangsThenAwaitStopped(Runnable endTheTerm) throws Exception {
    CountDownLatch stopEntered = new CountDownLatch(1);
    CountDownLatch stopRelease = new CountDownLatch(1);
    LeaderService hangsInStop = new LeaderService() {
      @Override
      public void start(LeadershipTerm term) {
      }

      @Override
      public void stop() throws Exception {
        stopEntered.countDown();
        stopRelease.await();
      }
    };
    Duration stopTimeout = Duration.ofSeconds(4);
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").lossPolicy(LossPolicy.recontend()).stopTimeout(stopTimeout).build())
        .service(hangsInStop)
        .start();
    Thread closer = new Thread(a::close, "test-closer");
    CountDownLatch awaitReturned = new CountDownLatch(1);
    Thread waiter = new Thread(() -> {
      try {
        a.awaitStopped();
        awaitReturned.countDown();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "test-waiter");
    waiter.setDaemon(true);
    try {
      assertThat(Replica.awaitTrue(() -> a.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(5)))
          .isTrue();
      endTheTerm.run();
      assertThat(stopEntered.await(10, TimeUnit.SECONDS)).as("the term's end stops the reconciler").isTrue();

      closer.start();
      // STOPPED is reported either by the loss reaction (right after close() began) or by close() itself once
      // it gave up on the stop; either way, awaitStopped() below must end once close() has returned.
      assertThat(Replica.awaitTrue(() -> a.state().kind() == ElectionState.Kind.STOPPED, Duration.ofSeconds(20)))
          .isTrue();
      waiter.start();
      closer.join(TimeUnit.SECONDS.toMillis(30));
      assertThat(closer.isAlive()).as("close() returns after stopTimeout").isFalse();

      assertThat(awaitReturned.await(10, TimeUnit.SECONDS))
          .as("awaitStopped() returns once close() gave up on the hung stop()").isTrue();
    } finally {
      stopRelease.countDown();
      a.close();
    }
  }

  /**
   * The review found LossPolicy.recontend()'s Javadoc saying "If a reconciler's stop() threw, or has not
   * returned, ... it stops (state STOPPED)"; docs/fabric8.md "as after one that does not return". The docs now say
   * what the runner does, which this test checks. Under RECONTEND the loss reaction waits for the stop without any timeout
   * (stopAndWaitUntilStoppedOr(closing); stopTimeout applies only to close() and EXIT), so a stop() that never
   * returns leaves the runner in FOLLOWING for ever: it does not contend (good) but never reaches STOPPED, and
   * awaitStopped() never returns; only liveness, which turns false once nothing talks to the Lease, restarts
   * the pod.
   */
  @Test
  void underRecontendAStopThatDoesNotReturnKeepsTheRunnerFromContendingAndTurnsItNotLive() throws Exception {
    CountDownLatch stopEntered = new CountDownLatch(1);
    CountDownLatch stopRelease = new CountDownLatch(1);
    LeaderService hangsInStop = new LeaderService() {
      @Override
      public void start(LeadershipTerm term) {
      }

      @Override
      public void stop() throws Exception {
        stopEntered.countDown();
        stopRelease.await();
      }
    };
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.recontend()).build();
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(hangsInStop)
        .start();
    try {
      assertThat(Replica.awaitTrue(() -> a.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(5)))
          .isTrue();
      api.takeLeaseAs("intruder");
      assertThat(stopEntered.await(10, TimeUnit.SECONDS)).isTrue();

      // Decided after this review: the docs now say what happens (no timeout on the wait; no new term while the
      // stop hangs; liveness turns false, so the kubelet restarts the pod).
      assertThat(Replica.awaitTrue(() -> !a.isLive(),
          settings.healthBudget().plus(settings.leaseDuration()).plusSeconds(10)))
          .as("not live once nothing talks to the Lease; state %s", a.state()).isTrue();
      assertThat(a.state().kind()).as("never contends again while the stop hangs")
          .isNotEqualTo(ElectionState.Kind.LEADING);
      assertThat(a.state().kind()).isNotEqualTo(ElectionState.Kind.STOPPED);
    } finally {
      stopRelease.countDown();
      a.close();
    }
  }
}
