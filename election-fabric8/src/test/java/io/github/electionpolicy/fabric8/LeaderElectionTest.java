package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Several replicas, each with its own client, contend for one Lease on one mock API server. */
class LeaderElectionTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void ofThreeReplicasExactlyOneLeadsAndTheOthersFollowIt() throws Exception {
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log);
        Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log);
        Replica c = Replica.start("c", api.client(), MockApi.fastSettings("c").build(), log)) {
      List<Replica> replicas = List.of(a, b, c);
      assertThat(Replica.awaitTrue(() -> replicas.stream().filter(Replica::leads).count() == 1
          && replicas.stream().filter(r -> !r.leads()).allMatch(r -> r.runner.state()
              instanceof ElectionState.Following f && f.leader().isPresent()), Duration.ofSeconds(5)))
          .as("one leader, two followers that know it").isTrue();
      Replica leader = replicas.stream().filter(Replica::leads).findFirst().orElseThrow();
      // A whole lease duration of the leader's renewals, during which a follower could (wrongly) take over.
      int renewals = (int) (MockApi.LEASE_DURATION.toMillis() / MockApi.RETRY_PERIOD.toMillis());
      assertThat(api.awaitWrites(leader.name, renewals)).as("the leader renews").isTrue();

      assertThat(replicas.stream().filter(Replica::leads)).containsExactly(leader);
      assertThat(replicas.stream().filter(r -> r != leader).map(r -> r.runner.state()))
          .allSatisfy(state -> assertThat(state)
              .isEqualTo(new ElectionState.Following(Optional.of(leader.name))));
      assertThat(log.running()).containsExactly(leader.name);
      assertThat(api.lease().getSpec().getHolderIdentity()).isEqualTo(leader.name);
    }
  }

  @Test
  void gracefulCloseHandsOverWithinOneSecondThroughAnEmptyHolder() throws Exception {
    List<String> holders = api.watchHolders();
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
      try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log)) {
        assertThat(Replica.awaitTrue(() -> b.runner.state().kind() == ElectionState.Kind.FOLLOWING
            && ((ElectionState.Following) b.runner.state()).leader().isPresent(), Duration.ofSeconds(5)))
            .isTrue();

        long closing = System.nanoTime();
        a.close();
        Optional<ServiceLog.Entry> takeover =
            log.await("b", ServiceLog.Kind.START, closing, Duration.ofSeconds(3));

        assertThat(takeover).isPresent();
        long handOverMillis = Duration.ofNanos(takeover.get().nanos() - closing).toMillis();
        System.out.println("MEASURED graceful hand-over: " + handOverMillis + " ms");
        assertThat(handOverMillis).isLessThan(1000);
        assertThat(Replica.awaitTrue(() -> holders.contains("b"), Duration.ofSeconds(2))).isTrue();
        assertThat(holders).containsSubsequence("a", "", "b");
        assertThat(log.overlap()).isEmpty();
      }
    }
  }

  /**
   * A partition, not a crash: a's client is closed while its runner goes on, so its renewals fail, its term
   * lapses at the renew deadline and its reconciler stops; b must still wait out the lease duration.
   */
  @Test
  void partitionedLeaderIsTakenOverAfterTheLeaseDurationAndNotBefore() throws Exception {
    Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log);
    // b starts once a leads, so that a is the leader this test cuts off.
    assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
    try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
          Duration.ofSeconds(5))).isTrue();

      long cut = System.nanoTime();
      a.client.close();
      Optional<ServiceLog.Entry> takeover = log.await("b", ServiceLog.Kind.START, cut,
          Duration.ofSeconds(6));
      // a's last renewal is its last write the server accepted before b's: renewals in flight when its
      // client closed included.
      List<LeaseWrite> writes = api.writes();
      LeaseWrite acquired = writes.stream().filter(w -> w.holder().equals("b")).findFirst().orElseThrow();
      LeaseWrite lastRenewal = writes.stream()
          .filter(w -> w.holder().equals("a") && w.resourceVersion() < acquired.resourceVersion())
          .reduce((first, second) -> second).orElseThrow();
      Instant expiry = lastRenewal.spec().getRenewTime().toInstant().plus(MockApi.LEASE_DURATION);
      Instant takenAt = Instant.now().minusNanos(System.nanoTime() - takeover.map(ServiceLog.Entry::nanos)
          .orElse(System.nanoTime()));

      assertThat(takeover).isPresent();
      long takeoverMillis = Duration.ofNanos(takeover.get().nanos() - cut).toMillis();
      System.out.println("MEASURED partition take-over: " + takeoverMillis + " ms");
      assertThat(takenAt).isAfterOrEqualTo(expiry);
      assertThat(Duration.ofMillis(takeoverMillis)).isLessThan(MockApi.LEASE_DURATION
          .plus(MockApi.RETRY_PERIOD.multipliedBy(2)).plus(Duration.ofMillis(1000)));
      assertThat(log.overlap()).isEmpty();
    } finally {
      a.close();
    }
  }

  /**
   * A crash: a's runner ends the way a killed process does (no stop, no release, no further write; see
   * {@link RunnerHooks#crash}), and the log records that its work ended at that instant.
   */
  @Test
  void crashedLeaderIsTakenOverAfterTheLeaseDurationAndNotBefore() throws Exception {
    Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log);
    assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
    try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
          Duration.ofSeconds(5))).isTrue();

      long crash = System.nanoTime();
      RunnerHooks.crash(a.runner);
      log.crashed("a");
      // Nothing of a's writes after the crash: this is its last renewal.
      Lease lastRenewal = api.lease();
      assertThat(lastRenewal.getSpec().getHolderIdentity()).isEqualTo("a");
      Instant expiry = lastRenewal.getSpec().getRenewTime().toInstant().plus(MockApi.LEASE_DURATION);
      Optional<ServiceLog.Entry> takeover = log.await("b", ServiceLog.Kind.START, crash,
          Duration.ofSeconds(6));

      assertThat(takeover).isPresent();
      Instant takenAt = Instant.now().minusNanos(System.nanoTime() - takeover.get().nanos());
      long takeoverMillis = Duration.ofNanos(takeover.get().nanos() - crash).toMillis();
      System.out.println("MEASURED crash take-over: " + takeoverMillis + " ms");
      assertThat(takenAt).isAfterOrEqualTo(expiry);
      assertThat(Duration.ofMillis(takeoverMillis)).isLessThan(MockApi.LEASE_DURATION
          .plus(MockApi.RETRY_PERIOD.multipliedBy(2)).plus(Duration.ofMillis(1000)));
      assertThat(log.of("a", ServiceLog.Kind.STOP)).as("only the crash ended a's work").hasSize(1)
          .allSatisfy(stop -> assertThat(stop.nanos() - crash).isNotNegative());
      assertThat(log.overlap()).isEmpty();
      assertThat(api.lease().getSpec().getHolderIdentity()).isEqualTo("b");
    } finally {
      a.close();
    }
  }

  @Test
  void closeFromAnInterruptedThreadStillStopsThenReleasesAndKeepsTheInterrupt() throws Exception {
    CountDownLatch stopping = new CountDownLatch(1);
    CountDownLatch letStopEnd = new CountDownLatch(1);
    LeaderService logged = log.service("a");
    LeaderService slowToStop = new LeaderService() {
      @Override
      public void start(LeadershipTerm term) throws Exception {
        logged.start(term);
      }

      @Override
      public void stop() throws Exception {
        stopping.countDown();
        // Ends only once the closing thread waits (or close() returned): a close() that did not wait for it
        // would have returned before this stop ends.
        letStopEnd.await(5, TimeUnit.SECONDS);
        logged.stop();
      }
    };
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(slowToStop)
        .start();
    assertThat(Replica.awaitTrue(() -> a.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(5)))
        .isTrue();
    try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
          Duration.ofSeconds(5))).isTrue();

      Thread closingThread = Thread.currentThread();
      java.util.concurrent.atomic.AtomicBoolean closeReturned = new java.util.concurrent.atomic.AtomicBoolean();
      Thread stopEnder = new Thread(() -> {
        try {
          if (stopping.await(5, TimeUnit.SECONDS)) {
            Await.holds(() -> closeReturned.get() || closingThread.getState() == Thread.State.WAITING
                || closingThread.getState() == Thread.State.TIMED_WAITING, Duration.ofSeconds(5));
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } finally {
          letStopEnd.countDown();
        }
      }, "stop-ender");
      stopEnder.start();
      long closing = System.nanoTime();
      Thread.currentThread().interrupt();
      a.close();
      closeReturned.set(true);
      boolean interruptedAfterClose = Thread.interrupted();
      long closed = System.nanoTime();
      String holderAfterClose = api.lease().getSpec().getHolderIdentity();

      assertThat(interruptedAfterClose).as("the interrupt flag is set again").isTrue();
      assertThat(stopping.getCount()).isZero();
      assertThat(log.of("a", ServiceLog.Kind.STOP)).as("close() waited for the stop").hasSize(1)
          .allSatisfy(stop -> assertThat(stop.nanos() - closed).isNegative());
      assertThat(holderAfterClose).as("released (or already taken over)").isIn("", "b");
      Optional<ServiceLog.Entry> takeover = log.await("b", ServiceLog.Kind.START, closing,
          Duration.ofSeconds(3));
      assertThat(takeover).isPresent();
      assertThat(Duration.ofNanos(takeover.get().nanos() - closing)).isLessThan(MockApi.LEASE_DURATION.dividedBy(2));
      assertThat(log.overlap()).isEmpty();
    } finally {
      Thread.interrupted();
      a.close();
    }
  }

  @Test
  void runUnelectedStartsReconcilersAtOnceWithoutAnyRequest() throws Exception {
    TimerCountingLoop loop = new TimerCountingLoop();
    try (ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.RUN_UNELECTED)
        .settings(MockApi.fastSettings("solo").build())
        .service(log.service("solo"))
        .loop(loop)
        .start()) {
      assertThat(log.running()).containsExactly("solo");
      assertThat(runner.state()).isEqualTo(new ElectionState.NotContending("solo"));
      assertThat(runner.health().ready()).isTrue();
      assertThat(runner.currentTerm()).hasValueSatisfying(term -> {
        assertThat(term.isElected()).isFalse();
        assertThat(term.isValid()).isTrue();
      });
      // Every Lease call, watch and access review of a runner is sent from a task of its loop, with a timer for its
      // deadline: once the tasks handed to the loop ran and no timer is pending, nothing is sent later either (no
      // need to wait and see).
      loop.drain();
      assertThat(loop.pending).as("timers of the unelected runner pending on its loop").isEmpty();
      assertThat(api.server.getRequestCount()).isZero();
    }
    assertThat(log.running()).isEmpty();
    loop.drain();
    assertThat(loop.pending).as("timers pending on the loop after the close").isEmpty();
    assertThat(api.server.getRequestCount()).isZero();
  }

  @Test
  void closeIsIdempotentAndEndsTheTerm() throws Exception {
    long started = System.nanoTime();
    Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log);
    assertThat(log.await("a", ServiceLog.Kind.START, started, Duration.ofSeconds(5))).isPresent();
    LeadershipTerm term = a.runner.currentTerm().orElseThrow();

    a.close();
    a.close();

    assertThat(term.isValid()).isFalse();
    assertThat(term.awaitEnd(Duration.ZERO)).isTrue();
    assertThat(a.runner.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
    assertThat(log.of("a", ServiceLog.Kind.STOP)).hasSize(1);
    assertThat(Stream.of(api.lease().getSpec().getHolderIdentity())).containsExactly("");
  }

  @Test
  void closeCalledFromAReconcilerReturnsPromptlyAndReleases() throws Exception {
    java.util.concurrent.atomic.AtomicReference<ElectionRunner> runnerRef =
        new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.CompletableFuture<Duration> closeTook = new java.util.concurrent.CompletableFuture<>();
    java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger stops = new java.util.concurrent.atomic.AtomicInteger();
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(LeaderService.of(term -> {
          try {
            ready.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          long before = System.nanoTime();
          runnerRef.get().close();
          closeTook.complete(Duration.ofNanos(System.nanoTime() - before));
        }, stops::incrementAndGet))
        .start();
    runnerRef.set(runner);
    ready.countDown();

    Duration took = closeTook.get(5, java.util.concurrent.TimeUnit.SECONDS);

    assertThat(took).isLessThan(Duration.ofMillis(1000));
    assertThat(runner.awaitStopped(Duration.ofSeconds(5))).isTrue();
    assertThat(stops).hasValue(1);
    assertThat(runner.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
    assertThat(api.lease().getSpec().getHolderIdentity()).isEmpty();
  }
}
