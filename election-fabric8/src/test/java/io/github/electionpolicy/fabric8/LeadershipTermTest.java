package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Terms carry what reconcilers need to stop in time and to fence their writes. */
class LeadershipTermTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void termTurnsInvalidAtItsDeadlineEvenWithoutTheElectionThread() {
    AtomicLong now = new AtomicLong(1_000);
    LeadershipTerm term = LeadershipTerm.elected("a", 3, Instant.EPOCH, "42", now::get, 2_000);

    assertThat(term.isValid()).isTrue();
    now.set(1_999);
    assertThat(term.isValid()).isTrue();
    now.set(2_000);
    assertThat(term.isValid()).isFalse();
  }

  @Test
  void termThatLapsedIsNotRevivedByALateRenewal() {
    AtomicLong now = new AtomicLong(1_000);
    LeadershipTerm term = LeadershipTerm.elected("a", 3, Instant.EPOCH, "42", now::get, 2_000);
    now.set(2_000);
    assertThat(term.isValid()).isFalse();

    term.extendUntil(5_000);

    assertThat(term.isValid()).isFalse();
  }

  @Test
  void leaderWhoseRenewalSucceedsOnlyAfterItsDeadlineGivesTheTermUp() throws Exception {
    // The renewal's wall-clock stamp is taken just before the request is sent: the test clock moves the
    // monotonic ticker past the term's deadline right then, as a stalled thread or a slow answer would.
    AtomicLong offset = new AtomicLong();
    java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
    Duration renewDeadline = Duration.ofSeconds(3);
    Duration retryPeriod = Duration.ofMillis(500);
    // Past the old deadline (3 s after the last renewal, about one retry period ago), short of the new one.
    long jump = renewDeadline.minus(retryPeriod.dividedBy(2)).toNanos();
    java.time.Clock clock = new java.time.Clock() {
      @Override
      public java.time.ZoneId getZone() {
        return java.time.ZoneOffset.UTC;
      }

      @Override
      public java.time.Clock withZone(java.time.ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        if (Thread.currentThread().getName().equals("election-loop")
            && armed.compareAndSet(true, false)) {
          offset.addAndGet(jump);
        }
        return Instant.now();
      }
    };
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").leaseDuration(Duration.ofSeconds(4)).renewDeadline(renewDeadline)
            .retryPeriod(retryPeriod).build())
        .service(log.service("a"))
        .ticker(() -> System.nanoTime() + offset.get())
        .clock(clock)
        .start();
    try {
      assertThat(log.await("a", ServiceLog.Kind.START, 0, Duration.ofSeconds(5))).isPresent();
      LeadershipTerm term = runner.currentTerm().orElseThrow();
      assertThat(api.awaitWrites("a", 2)).as("a renews its term twice before its clock jumps").isTrue();

      long jumped = System.nanoTime();
      armed.set(true);

      assertThat(log.await("a", ServiceLog.Kind.STOP, jumped, Duration.ofSeconds(3))).isPresent();
      assertThat(term.isValid()).isFalse();
    } finally {
      runner.close();
    }
  }

  @Test
  void termEndsOnceAndForAll() throws Exception {
    AtomicLong now = new AtomicLong(0);
    LeadershipTerm term = LeadershipTerm.elected("a", 0, Instant.EPOCH, "1", now::get, 1_000);

    term.end();
    term.extendUntil(5_000);

    assertThat(term.isValid()).isFalse();
    assertThat(term.awaitEnd(Duration.ZERO)).isTrue();
  }

  @Test
  void leaseTransitionsGrowWithEachHandOverSoTermsFenceWrites() throws Exception {
    Replica a = Replica.startLeader("a", api.client(), MockApi.fastSettings("a").build(), log);
    try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log)) {
      Optional<ServiceLog.Entry> first = log.await("a", ServiceLog.Kind.START, 0, Duration.ofSeconds(5));
      assertThat(first).isPresent();
      LeadershipTerm aTerm = first.get().term();

      a.close();
      Optional<ServiceLog.Entry> second = log.await("b", ServiceLog.Kind.START, 0, Duration.ofSeconds(3));

      assertThat(second).isPresent();
      LeadershipTerm bTerm = second.get().term();
      assertThat(aTerm.isValid()).isFalse();
      assertThat(bTerm.isValid()).isTrue();
      assertThat(bTerm.isElected()).isTrue();
      assertThat(bTerm.holderIdentity()).isEqualTo("b");
      assertThat(bTerm.leaseTransitions()).isGreaterThan(aTerm.leaseTransitions());
      assertThat(bTerm.acquireTime()).isAfter(aTerm.acquireTime());
      assertThat(bTerm.resourceVersion()).isNotEqualTo(aTerm.resourceVersion()).isNotEmpty();
      assertThat(api.lease().getSpec().getLeaseTransitions()).isEqualTo(bTerm.leaseTransitions());
    } finally {
      a.close();
    }
  }

  @Test
  void reconcilerThatFailsToStartGivesTheTermUpAndTheLossPolicyApplies() throws Exception {
    java.util.List<Integer> exits = new java.util.concurrent.CopyOnWriteArrayList<>();
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").lossPolicy(LossPolicy.exit(exits::add)).build())
        .service(log.service("a"))
        .service(LeaderService.of(term -> {
          throw new IllegalStateException("informer cache did not sync");
        }, () -> { }))
        .start();
    try {
      assertThat(runner.awaitStopped(Duration.ofSeconds(5))).isTrue();

      assertThat(log.of("a", ServiceLog.Kind.START)).hasSize(1);
      assertThat(log.of("a", ServiceLog.Kind.STOP)).hasSize(1);
      assertThat(exits).containsExactly(LossPolicy.LOSS_EXIT_STATUS);
      assertThat(api.lease().getSpec().getHolderIdentity()).isEmpty();
    } finally {
      runner.close();
    }
  }
}
