package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Observable state, health for probes, and listener hooks. */
class HealthAndListenerTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void listenerSeesEveryStateChangeInOrder() throws Exception {
    List<String> changes = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        changes.add(previous.kind() + "->" + current.kind());
      }
    };
    Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log, listener);
    assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();

    a.close();

    assertThat(Replica.awaitTrue(() -> changes.size() == 2, Duration.ofSeconds(2))).isTrue();
    assertThat(changes).containsExactly("STARTING->LEADING", "LEADING->STOPPED");
  }

  @Test
  void aListenerThatHearsStoppedAfterCloseSeesTheRunnerClosed() throws Exception {
    AtomicReference<ElectionRunner> runner = new AtomicReference<>();
    List<String> atStopped = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          atStopped.add("closed=" + runner.get().isClosed());
        }
      }
    };
    Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log, listener);
    runner.set(a.runner);
    assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
    assertThat(a.runner.isClosed()).as("running").isFalse();

    a.close();

    assertThat(a.runner.isClosed()).isTrue();
    assertThat(a.runner.awaitStopped(Duration.ofSeconds(5))).isTrue();
    assertThat(atStopped).containsExactly("closed=true");
  }

  /**
   * A listener that does not return does not hold {@code close()}, which returns once {@code STOPPED} is reported
   * ({@code awaitStopped()} is what waits for the listeners). A close that waited for them (tried in de704d5, reverted
   * after review h-close) would have to bound the wait by the stop timeout.
   */
  @Test
  void aListenerThatDoesNotReturnDoesNotHoldClose() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean stillHearing = new AtomicBoolean();
    ElectionListener stuck = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          stillHearing.set(true);
          try {
            release.await(60, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          stillHearing.set(false);
        }
      }
    };
    Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").stopTimeout(Duration.ofSeconds(1)).build(),
        log, stuck);
    assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
    try {
      CompletableFuture<Void> closed = CompletableFuture.runAsync(a::close);

      closed.get(30, TimeUnit.SECONDS);
      assertThat(stillHearing).as("close() returned while the stuck listener still heard STOPPED").isTrue();
      assertThat(a.runner.state().kind()).isEqualTo(ElectionState.Kind.STOPPED);
    } finally {
      release.countDown();
    }
  }

  /**
   * A runner that stopped on its own is closed at once, even while a listener still hears {@code STOPPED}: that
   * listener may be in {@code System.exit} (an application that exits when its runner stopped on its own), whose
   * shutdown hook is this close, so waiting for it would hold the exit (review h-close).
   */
  @Test
  void aRunnerThatStoppedOnItsOwnIsClosedAtOnceWhileAListenerStillHearsStopped() throws Exception {
    api.denying(Set.of("update"));
    CountDownLatch hearing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ElectionListener exitsOnItsOwnStop = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          hearing.countDown();
          try {
            release.await(60, TimeUnit.SECONDS); // as System.exit waits for the shutdown hooks
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    };
    Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").stopTimeout(Duration.ofSeconds(30)).build(),
        log, exitsOnItsOwnStop);
    try {
      assertThat(hearing.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(a.runner.isClosed()).as("stopped on its own").isFalse();

      CompletableFuture.runAsync(a::close).get(10, TimeUnit.SECONDS);
      assertThat(a.runner.isClosed()).isTrue();
    } finally {
      release.countDown();
    }
  }

  @Test
  void aFollowerStartsInStartingAndMovesToFollowing() throws Exception {
    List<ElectionState> seen = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (seen.isEmpty()) {
          seen.add(previous);
        }
        seen.add(current);
      }
    };
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
      try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log, listener)) {
        assertThat(Replica.awaitTrue(() -> seen.size() >= 2, Duration.ofSeconds(5))).isTrue();

        assertThat(seen).startsWith(new ElectionState.Starting(), new ElectionState.Following(Optional.of("a")));
      }
    }
  }

  @Test
  void listenerHearsOfRenewFailuresWhileTheServerIsUnreachable() throws Exception {
    ReplicaLink proxy = api.proxy();
    List<Duration> failures = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
        failures.add(sinceLastRenewal);
      }
    };
    try (Replica a = Replica.start("a", api.client(proxy.url()), MockApi.fastSettings("a").build(), log,
        listener)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();

      proxy.refuseConnections();

      assertThat(Replica.awaitTrue(() -> !a.leads(), Duration.ofSeconds(3))).isTrue();
      assertThat(failures).isNotEmpty()
          .allSatisfy(since -> assertThat(since).isLessThan(MockApi.RENEW_DEADLINE.plusMillis(100)));
    }
  }

  @Test
  void listenerHearsEachRenewalWithItsRoundTripOffTheLeaseThread() throws Exception {
    List<Duration> roundTrips = new CopyOnWriteArrayList<>();
    List<String> threads = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void renewed(Duration roundTrip) {
        threads.add(Thread.currentThread().getName());
        roundTrips.add(roundTrip);
      }
    };
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log, listener)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();

      // Renewals come every retry period (200 ms); three take well under the wait.
      assertThat(Replica.awaitTrue(() -> roundTrips.size() >= 3, Duration.ofSeconds(10))).isTrue();
      List<Duration> heard = List.copyOf(roundTrips);

      // Each renewal heard is an update the server accepted after the one that took the Lease, answered
      // within the renew deadline (a later answer is a loss, not a renewal).
      assertThat(api.writes().stream().filter(write -> write.holder().equals("a")).count())
          .isGreaterThanOrEqualTo(heard.size() + 1);
      assertThat(heard).allSatisfy(rtt -> assertThat(rtt).isPositive().isLessThan(MockApi.RENEW_DEADLINE));
      assertThat(threads).allSatisfy(name -> assertThat(name).startsWith("election-listeners["));
    }
  }

  @Test
  void aFollowerHearsNoRenewal() throws Exception {
    List<Duration> heardByB = new CopyOnWriteArrayList<>();
    List<Duration> heardByA = new CopyOnWriteArrayList<>();
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log,
        recordingRenewals(heardByA))) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
      try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log,
          recordingRenewals(heardByB))) {
        assertThat(Replica.awaitTrue(() -> b.runner.state().kind() == ElectionState.Kind.FOLLOWING,
            Duration.ofSeconds(5))).isTrue();
        int renewalsOfA = heardByA.size();

        assertThat(Replica.awaitTrue(() -> heardByA.size() >= renewalsOfA + 3, Duration.ofSeconds(10))).isTrue();

        assertThat(heardByB).isEmpty();
      }
    }
  }

  private static ElectionListener recordingRenewals(List<Duration> roundTrips) {
    return new ElectionListener() {
      @Override
      public void renewed(Duration roundTrip) {
        roundTrips.add(roundTrip);
      }
    };
  }

  @Test
  void theRunnerNamesItsLease() throws Exception {
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(a.runner.leaseName()).contains(MockApi.LEASE);
      assertThat(a.runner.namespace()).contains(MockApi.NAMESPACE);
    }
    try (ElectionRunner unelected = ElectionRunner.builder()
        .decision(MockApi.RUN_UNELECTED)
        .service(log.service("unelected"))
        .start()) {
      assertThat(unelected.leaseName()).isEmpty();
    }
    try (ElectionRunner unelected = ElectionRunner.builder()
        .decision(MockApi.RUN_UNELECTED)
        .settings(MockApi.fastSettings("u").build())
        .service(log.service("unelected-with-settings"))
        .start()) {
      assertThat(unelected.leaseName()).contains(MockApi.LEASE);
      assertThat(unelected.namespace()).isEmpty();
    }
  }

  @Test
  void followerIsReadyAndLiveAndNamesTheLeader() throws Exception {
    try (Replica a = Replica.startLeader("a", api.client(), MockApi.fastSettings("a").build(), log);
        Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> a.leads()
          && b.runner.state().equals(new ElectionState.Following(Optional.of("a"))), Duration.ofSeconds(5)))
          .isTrue();

      ElectionHealth health = b.runner.health();

      assertThat(health.ready()).isTrue();
      assertThat(health.live()).isTrue();
      assertThat(health.state()).isEqualTo(new ElectionState.Following(Optional.of("a")));
      // A watching follower reads once per lease duration; readiness allows that plus one request timeout.
      assertThat(health.sinceLastLeaseSuccess()).hasValueSatisfying(
          since -> assertThat(since).isLessThanOrEqualTo(MockApi.LEASE_DURATION.plus(MockApi.RENEW_DEADLINE)));
      assertThat(b.runner.currentTerm()).isEmpty();
      assertThat(b.runner.namespace()).contains(MockApi.NAMESPACE);
    }
  }

  @Test
  void leaderOnlyReadinessMakesOnlyTheLeaderReady() throws Exception {
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log,
        Readiness.LEADER_ONLY)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
      try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log,
          Readiness.LEADER_ONLY)) {
        assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
            Duration.ofSeconds(5))).isTrue();

        assertThat(Replica.awaitTrue(() -> a.runner.health().ready(), Duration.ofSeconds(5))).isTrue();
        assertThat(b.runner.health().ready()).isFalse();
        assertThat(b.runner.health().live()).isTrue();
        assertThat(b.runner.health().sinceLastLeaseSuccess()).isPresent();
      }
    }
  }

  @Test
  void leaderOnlyReadinessMovesToTheNewLeaderAfterAHandOver() throws Exception {
    Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log, Readiness.LEADER_ONLY);
    assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
    try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log,
        Readiness.LEADER_ONLY)) {
      assertThat(Replica.awaitTrue(() -> b.runner.state().kind() == ElectionState.Kind.FOLLOWING,
          Duration.ofSeconds(5))).isTrue();
      assertThat(b.runner.isReady()).isFalse();

      a.close();

      assertThat(Replica.awaitTrue(b::leads, Duration.ofSeconds(5))).isTrue();
      // Ready once its services have started for the new term, not at the instant it is elected.
      assertThat(Replica.awaitTrue(b.runner::isReady, Duration.ofSeconds(5))).isTrue();
      assertThat(a.runner.isReady()).isFalse();
    }
  }

  @Test
  void anUnelectedRunnerIsReadyInEitherReadinessMode() {
    for (Readiness mode : Readiness.values()) {
      try (ElectionRunner runner = ElectionRunner.builder()
          .decision(MockApi.RUN_UNELECTED)
          .service(log.service("unelected-" + mode))
          .readiness(mode)
          .start()) {
        assertThat(runner.health().ready()).as(mode.name()).isTrue();
        assertThat(runner.state()).isInstanceOf(ElectionState.NotContending.class);
      }
    }
  }

  @Test
  void followingIsCalledWhenFollowingBeginsAndWhenTheLeaderChangesOffTheLeaseThread() throws Exception {
    List<Optional<String>> leadersSeenByA = new CopyOnWriteArrayList<>();
    List<Optional<String>> leadersSeenByB = new CopyOnWriteArrayList<>();
    List<String> threads = new CopyOnWriteArrayList<>();
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log,
        recordingFollowing(leadersSeenByA, threads))) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
      try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log,
          recordingFollowing(leadersSeenByB, threads))) {
        assertThat(Replica.awaitTrue(() -> leadersSeenByB.contains(Optional.of("a")), Duration.ofSeconds(5)))
            .as("following begins").isTrue();
        assertThat(leadersSeenByA).as("never called while leading").isEmpty();

        api.takeLeaseAs("intruder");

        assertThat(Replica.awaitTrue(() -> leadersSeenByB.contains(Optional.of("intruder")),
            Duration.ofSeconds(5))).as("the leader changed").isTrue();
        assertThat(Replica.awaitTrue(() -> leadersSeenByA.contains(Optional.of("intruder")),
            Duration.ofSeconds(5))).as("following begins after a loss").isTrue();
      }
    }
    assertThat(leadersSeenByB).startsWith(Optional.of("a"));
    assertThat(threads).isNotEmpty().allSatisfy(name -> assertThat(name).startsWith("election-listeners["));
  }

  private static ElectionListener recordingFollowing(List<Optional<String>> leaders, List<String> threads) {
    return new ElectionListener() {
      @Override
      public void following(Optional<String> leader) {
        threads.add(Thread.currentThread().getName());
        leaders.add(leader);
      }
    };
  }

  @Test
  void closedRunnerIsNotReady() throws Exception {
    Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log);
    assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();

    a.close();

    assertThat(a.runner.health().ready()).isFalse();
    assertThat(a.runner.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
  }

  /**
   * Attack: the protocol accepts a renewal answered before its deadline on the protocol's clock, but the
   * term is extended a moment later, on the Lease thread (LeaseElector.take); if the term's own clock says it
   * lapsed meanwhile (a descheduled thread, a GC pause on a loaded machine), {@code extendUntil} refuses and the
   * term is lost (TERM_LAPSED). LeaseElector published {@code renewed} for that renewal anyway, right before
   * the loss: the hook, and the renew-duration timer of election-micrometer, counted a renewal that renewed
   * nothing, which its Javadoc rules out ("not called ... for a renewal answered after the renew deadline
   * (that is a loss)").
   *
   * <p>The test moves the runner's monotonic clock past the term's end inside the third {@code extendUntil},
   * exactly the window above; two renewals extended the term, so two must be heard before the loss.
   */
  @Test
  void aRenewalThatCouldNotExtendTheLapsedTermIsNotReportedAsARenewal() throws Exception {
    AtomicLong offset = new AtomicLong();
    AtomicInteger extensions = new AtomicInteger();
    Ticker ticker = () -> {
      boolean extending = StackWalker.getInstance()
          .walk(frames -> frames.limit(4).anyMatch(frame -> frame.getMethodName().equals("extendUntil")));
      if (extending && extensions.incrementAndGet() == 3) {
        offset.addAndGet(Duration.ofSeconds(30).toNanos());
      }
      return System.nanoTime() + offset.get();
    };
    List<String> heard = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        heard.add(current.kind().name());
      }

      @Override
      public void renewed(Duration roundTrip) {
        heard.add("renewed");
      }
    };
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(log.service("a"))
        .listener(listener)
        .ticker(ticker)
        .start();
    try {
      assertThat(Replica.awaitTrue(() -> heard.indexOf("FOLLOWING") > heard.indexOf("LEADING")
          && heard.contains("LEADING"), Duration.ofSeconds(20))).as("the term lapsed: " + heard).isTrue();

      List<String> seen = List.copyOf(heard);
      List<String> firstTerm = seen.subList(seen.indexOf("LEADING") + 1, seen.indexOf("FOLLOWING"));
      assertThat(extensions.get()).isGreaterThanOrEqualTo(3);
      assertThat(firstTerm).as("renewals heard while the first term lasted").containsExactly("renewed", "renewed");
    } finally {
      runner.close();
    }
  }
}
