package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.github.electionpolicy.testsupport.LogCapture;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Whatever a reconciler throws from {@code start} or {@code stop}, {@link Error}s included: every other
 * reconciler is still stopped, the Lease is released only when they all stopped cleanly (otherwise a follower
 * waits out the lease duration), and a failed start applies the loss policy.
 */
class ServiceFailureTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();
  private final CountDownLatch followerReady = new CountDownLatch(1);

  /** A reconciler of replica {@code name}, logged, whose stop() logs and then throws an AssertionError. */
  private LeaderService stopThrowsAnError(String name) {
    LeaderService logged = log.service(name);
    return new LeaderService() {
      @Override
      public void start(LeadershipTerm term) throws Exception {
        logged.start(term);
      }

      @Override
      public void stop() throws Exception {
        logged.stop();
        throw new AssertionError("a bug in stop()");
      }
    };
  }

  private static LeaderService startThrows(Throwable thrown) {
    return LeaderService.of(term -> {
      if (thrown instanceof Error) {
        throw (Error) thrown;
      }
      throw (RuntimeException) thrown;
    }, () -> {
      throw new AssertionError("stop() of a reconciler that never started");
    });
  }

  /**
   * A stop that threw may have left its work running (LeaderService.stop): under RECONTEND the runner must not
   * start a new term in this process, where the new run could overlap the old (found by the review of
   * election-josdk). It stops for good instead, even though the Lease is free for the taking again.
   */
  @Test
  void underRecontendAStopThatThrewEndsContention() throws Exception {
    ElectionRunner a = start("a", LossPolicy.recontend(), stopThrowsAnError("a"));
    try {
      assertThat(Replica.awaitTrue(() -> a.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(5)))
          .isTrue();

      api.takeLeaseAs("intruder");

      assertThat(a.awaitStopped(Duration.ofSeconds(5))).as("it stops contending").isTrue();
      assertThat(a.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.LOST));
      // Must wait: the check is that the stopped runner takes no second term once the intruder's Lease expired,
      // and neither the intruder (it does not renew) nor the stopped runner marks that time.
      Thread.sleep(MockApi.LEASE_DURATION.plus(MockApi.RETRY_PERIOD.multipliedBy(3)).toMillis());
      assertThat(log.of("a", ServiceLog.Kind.START)).as("no second term after the intruder's lease expired")
          .hasSize(1);
    } finally {
      a.close();
    }
  }

  private ElectionRunner start(String identity, LossPolicy policy, LeaderService... reconcilers) {
    ElectionRunner.Builder builder = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings(identity).lossPolicy(policy).build());
    for (LeaderService reconciler : reconcilers) {
      builder.service(reconciler);
    }
    return builder.start();
  }

  /** Starts b once {@code leader} leads (start() returns before the first Lease call), and waits until b follows. */
  private Replica followerOf(ElectionRunner leader) throws InterruptedException {
    assertThat(Replica.awaitTrue(() -> leader.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(5)))
        .isTrue();
    Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log);
    assertThat(Replica.awaitTrue(
        () -> b.runner.state().equals(new ElectionState.Following(Optional.of(leader.identity()))),
        Duration.ofSeconds(5))).isTrue();
    return b;
  }

  /** When the Lease, as last written by its holder, expires: its renewTime plus the lease duration. */
  private static Instant expiryOf(Lease lease) {
    return lease.getSpec().getRenewTime().toInstant().plus(MockApi.LEASE_DURATION);
  }

  private static Instant wallTimeOf(ServiceLog.Entry entry) {
    return Instant.now().minusNanos(System.nanoTime() - entry.nanos());
  }

  @Test
  void errorFromOneStopStillStopsTheOthersAndCloseLeavesTheLeaseToExpire() throws Exception {
    ElectionRunner a = start("a", LossPolicy.recontend(), log.service("a"), stopThrowsAnError("a"));
    try (LogCapture captured = new LogCapture(); Replica b = followerOf(a)) {
      long closing = System.nanoTime();
      a.close();
      Lease afterClose = api.lease();
      Optional<ServiceLog.Entry> takeover = log.await("b", ServiceLog.Kind.START, closing,
          Duration.ofSeconds(6));

      assertThat(log.of("a", ServiceLog.Kind.STOP)).as("both reconcilers stopped").hasSize(2);
      assertThat(afterClose.getSpec().getHolderIdentity()).as("not released").isEqualTo("a");
      assertThat(captured.text()).contains("A service failed to stop; leaving the Lease to expire");
      assertThat(a.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
      assertThat(takeover).isPresent();
      assertThat(wallTimeOf(takeover.get())).isAfterOrEqualTo(expiryOf(afterClose));
      assertThat(log.overlap()).isEmpty();
    } finally {
      a.close();
    }
  }

  @Test
  void errorFromAStopDuringALossStillStopsTheOthersAndAppliesTheLossPolicy() throws Exception {
    List<Integer> exits = new CopyOnWriteArrayList<>();
    ElectionRunner a = start("a", LossPolicy.exit(exits::add), log.service("a"), stopThrowsAnError("a"));
    try {
      assertThat(Replica.awaitTrue(() -> a.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(5)))
          .isTrue();

      api.takeLeaseAs("intruder");

      assertThat(a.awaitStopped(Duration.ofSeconds(5))).isTrue();
      assertThat(log.of("a", ServiceLog.Kind.STOP)).as("both reconcilers stopped").hasSize(2);
      assertThat(exits).containsExactly(LossPolicy.LOSS_EXIT_STATUS);
    } finally {
      a.close();
    }
  }

  @Test
  void errorFromAStartStopsTheStartedOnesReleasesAndAppliesTheLossPolicy() throws Exception {
    List<LeadershipTerm> losses = new CopyOnWriteArrayList<>();
    ElectionRunner a = start("a", LossPolicy.custom(lost -> {
      losses.add(lost);
      return LossHandler.AfterLoss.STOP;
    }), log.service("a"), waitsForTheFollower(),
        startThrows(new AssertionError("a bug in start()")));
    try (Replica b = followerOf(a)) {
      long failing = System.nanoTime();
      followerReady.countDown();
      Optional<ServiceLog.Entry> takeover = log.await("b", ServiceLog.Kind.START, failing,
          Duration.ofSeconds(3));

      assertThat(a.awaitStopped(Duration.ofSeconds(5))).isTrue();
      assertThat(log.of("a", ServiceLog.Kind.START)).hasSize(1);
      assertThat(log.of("a", ServiceLog.Kind.STOP)).as("the started one stopped").hasSize(1);
      assertThat(losses).as("the loss policy ran once").hasSize(1);
      assertThat(losses.get(0).isValid()).isFalse();
      assertThat(takeover).as("released: b takes over well before the lease duration").isPresent();
      assertThat(Duration.ofNanos(takeover.get().nanos() - failing)).isLessThan(Duration.ofSeconds(1));
      assertThat(log.overlap()).isEmpty();
    } finally {
      a.close();
    }
  }

  @Test
  void errorFromAStartWhoseCleanupStopAlsoFailsGivesUpTheTermWithoutReleasing() throws Exception {
    List<LeadershipTerm> losses = new CopyOnWriteArrayList<>();
    ElectionRunner a = start("a", LossPolicy.custom(lost -> {
      losses.add(lost);
      return LossHandler.AfterLoss.STOP;
    }), stopThrowsAnError("a"), waitsForTheFollower(),
        startThrows(new IllegalStateException("cannot start")));
    try (Replica b = followerOf(a)) {
      long failing = System.nanoTime();
      followerReady.countDown();
      assertThat(a.awaitStopped(Duration.ofSeconds(5))).isTrue();
      Lease afterGivingUp = api.lease();
      Optional<ServiceLog.Entry> takeover = log.await("b", ServiceLog.Kind.START, failing,
          Duration.ofSeconds(6));

      assertThat(losses).as("the loss policy ran once").hasSize(1);
      assertThat(afterGivingUp.getSpec().getHolderIdentity()).as("not released").isEqualTo("a");
      assertThat(takeover).isPresent();
      assertThat(wallTimeOf(takeover.get())).isAfterOrEqualTo(expiryOf(afterGivingUp));
      assertThat(log.overlap()).isEmpty();
    } finally {
      a.close();
    }
  }

  @Test
  void virtualMachineErrorFromAStartKeepsTheLeaseAndStopsContendingWhateverThePolicy() throws Exception {
    ElectionRunner a = start("a", LossPolicy.recontend(), log.service("a"),
        startThrows(new OutOfMemoryError("simulated")));
    try {
      assertThat(a.awaitStopped(Duration.ofSeconds(5))).as("no new term under RECONTEND").isTrue();

      assertThat(log.of("a", ServiceLog.Kind.START)).hasSize(1);
      assertThat(log.of("a", ServiceLog.Kind.STOP)).as("the started one stopped").hasSize(1);
      assertThat(api.lease().getSpec().getHolderIdentity()).as("not released").isEqualTo("a");
      assertThat(a.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.LOST));
    } finally {
      a.close();
    }
  }

  /** A reconciler whose start waits until a follower follows, so the next start fails only then. */
  private LeaderService waitsForTheFollower() {
    return LeaderService.of(term -> {
      try {
        followerReady.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, () -> { });
  }
}
