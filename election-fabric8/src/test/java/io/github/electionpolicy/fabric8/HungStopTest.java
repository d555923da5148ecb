package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A service's {@code stop()} that does not return: every stop has {@code stopTimeout} as its deadline, after a
 * failed start, a loss under {@code RECONTEND}, a failure of the election logic or a close; past it the runner
 * gives the term up without a release, is not live, reaches {@code STOPPED} and {@code awaitStopped()} returns.
 * (From the adversarial reviews of the runner's rewrite onto RunnerLifecycle, commit 0201dfc, and of its
 * concurrency changes before that, the "final review".)
 */
class HungStopTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(2);

  /**
   * FINDING 1. A service fails to start; ServiceSequence.startAll then stops the services it already started,
   * on the services lane, with no deadline (no StopServices command, so no StopDeadline timer). When one of
   * those stop() calls hangs, ServicesStarted never reaches the lifecycle: it stays LEADING with services
   * STARTING, the elector keeps renewing the Lease for ever (no Relinquish is ever sent), no other replica can
   * ever lead, and health stays live (servicesHung is never set). Every other stop has stopTimeout as deadline.
   */
  @Test
  void aStopThatHangsAfterAFailedStartHasStopTimeoutAsDeadline() throws Exception {
    CountDownLatch unblock = new CountDownLatch(1);
    CountDownLatch stopEntered = new CountDownLatch(1);
    LeaderService hangsInStop = new LeaderService() {
      @Override
      public void start(LeadershipTerm term) {}

      @Override
      public void stop() throws InterruptedException {
        stopEntered.countDown();
        unblock.await();
      }
    };
    LeaderService failsToStart = LeaderService.of(term -> {
      throw new IllegalStateException("simulated: the second service cannot start");
    }, () -> { });
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").stopTimeout(STOP_TIMEOUT).build())
        .service(hangsInStop)
        .service(failsToStart)
        .start();
    Replica b = null;
    try {
      assertThat(stopEntered.await(5, TimeUnit.SECONDS)).as("a led, its second start failed").isTrue();
      b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log);

      // After stopTimeout the runner must give up on the stop: liveness false, the term given up without a
      // release, and another replica leads once the Lease expired.
      boolean bLeads = Replica.awaitTrue(b::leads,
          STOP_TIMEOUT.plus(MockApi.LEASE_DURATION).plus(MockApi.LEASE_DURATION).plusSeconds(1));
      assertThat(a.isLive()).as("a stop() outlived stopTimeout: not live; state %s", a.state()).isFalse();
      assertThat(bLeads).as("b leads once a gave the term up; a is %s, Lease %s", a.state(),
          api.lease().getSpec().getHolderIdentity()).isTrue();
    } finally {
      unblock.countDown();
      a.close();
      if (b != null) {
        b.close();
      }
    }
  }

  /**
   * FINDING 1, running unelected: the same stop without a deadline makes Builder.start() (which waits for the
   * unelected start) hang for ever instead of throwing the start's failure after at most stopTimeout.
   */
  @Test
  void unelectedAStopThatHangsAfterAFailedStartHasStopTimeoutAsDeadline() throws Exception {
    CountDownLatch unblock = new CountDownLatch(1);
    LeaderService hangsInStop = new LeaderService() {
      @Override
      public void start(LeadershipTerm term) {}

      @Override
      public void stop() throws InterruptedException {
        unblock.await();
      }
    };
    LeaderService failsToStart = LeaderService.of(term -> {
      throw new IllegalStateException("simulated: the second service cannot start");
    }, () -> { });
    CompletableFuture<ElectionRunner> starting = CompletableFuture.supplyAsync(() -> ElectionRunner.builder()
        .decision(MockApi.RUN_UNELECTED)
        .settings(LeaseSettings.builder().leaseName(MockApi.LEASE).stopTimeout(STOP_TIMEOUT).build())
        .service(hangsInStop)
        .service(failsToStart)
        .start());
    try {
      boolean returned = Replica.awaitTrue(starting::isDone, STOP_TIMEOUT.plusSeconds(3));
      assertThat(returned).as("start() returns (throws) once the stop outlived stopTimeout").isTrue();
      assertThat(starting).isCompletedExceptionally();
    } finally {
      unblock.countDown();
    }
  }

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
   * The same race when the election logic fails (here: an Error while it renews) while leading under
   * RECONTEND: the old runner reported STOPPED at once once close() began, so an awaitStopped() begun then
   * waited for the hung stop() (found beside the RECONTEND one; older than it).
   */
  @Test
  void awaitStoppedReturnsOnceCloseGaveUpOnAStopHungAfterTheElectionFailed() throws Exception {
    closeWhileAStopHangsThenAwaitStopped(() -> failRenewals.set(true));
  }

  private final java.util.concurrent.atomic.AtomicBoolean failRenewals =
      new java.util.concurrent.atomic.AtomicBoolean();

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
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.recontend()).stopTimeout(stopTimeout)
        .build();
    LeaseTransport failing = new ForwardingTransport(new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
        settings, SharedPools.io())) {
      @Override
      public Call update(LeaseRecord record, Answered done) {
        if (failRenewals.get()) {
          throw new OutOfMemoryError("simulated: the loop ran out of memory while it renewed");
        }
        return super.update(record, done);
      }
    };
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .transport(failing)
        .decision(MockApi.CONTEND)
        .settings(settings)
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
   * The review found that under RECONTEND the old runner waited for a stop() without any timeout, so a stop()
   * that never returned left it in FOLLOWING for ever: it did not contend (good) but never reached STOPPED,
   * and awaitStopped() never returned. Decided since (RunnerLifecycle): every stop has stopTimeout as its
   * deadline; past it the runner stops for good, STOPPED with cause LOST, and is not live, so the kubelet
   * restarts the pod; it never contends again while the stop hangs.
   */
  @Test
  void underRecontendAStopThatDoesNotReturnStopsTheRunnerForGoodWithinStopTimeoutAndTurnsItNotLive()
      throws Exception {
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
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.recontend())
        .stopTimeout(Duration.ofMillis(500)).build();
    List<ElectionState> states = new java.util.concurrent.CopyOnWriteArrayList<>();
    ElectionRunner a = ElectionRunner.builder()
        .listener(new ElectionListener() {
          @Override
          public void stateChanged(ElectionState previous, ElectionState current) {
            states.add(current);
          }
        })
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

      assertThat(a.awaitStopped(Duration.ofSeconds(5))).as("STOPPED within stopTimeout; awaitStopped() returns")
          .isTrue();
      assertThat(a.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.LOST));
      assertThat(a.isLive()).as("the stop still hangs: restart the pod").isFalse();
      assertThat(states.stream().filter(s -> s.kind() == ElectionState.Kind.LEADING)).as("never leads again")
          .hasSize(1);
    } finally {
      stopRelease.countDown();
      a.close();
    }
  }
}
