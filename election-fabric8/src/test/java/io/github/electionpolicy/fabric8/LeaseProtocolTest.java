package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The rules of the Lease protocol that client-go's tests pin down, against the mock API server. */
class LeaseProtocolTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  private void createLeaseHeldBy(String holder, ZonedDateTime renewTime) {
    api.client().leases().inNamespace(MockApi.NAMESPACE).resource(new LeaseBuilder()
        .withNewMetadata().withName(MockApi.LEASE).withNamespace(MockApi.NAMESPACE).endMetadata()
        .withNewSpec()
        .withHolderIdentity(holder)
        .withLeaseDurationSeconds((int) MockApi.LEASE_DURATION.getSeconds())
        .withAcquireTime(renewTime)
        .withRenewTime(renewTime)
        .withLeaseTransitions(4)
        .endSpec()
        .build()).create();
  }

  @Test
  void followerIgnoresAnAncientRemoteRenewTimeAndWaitsTheLeaseDurationOnItsOwnClock() throws Exception {
    createLeaseHeldBy("skewed-node", ZonedDateTime.now().minusHours(1));

    long started = System.nanoTime();
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      Optional<ServiceLog.Entry> taken = log.await("a", ServiceLog.Kind.START, started,
          MockApi.LEASE_DURATION.plusSeconds(3));

      assertThat(taken).isPresent();
      assertThat(Duration.ofNanos(taken.get().nanos() - started)).isGreaterThanOrEqualTo(MockApi.LEASE_DURATION);
      assertThat(taken.get().term().leaseTransitions()).isEqualTo(5);
    }
  }

  @Test
  void followerTakesOverALeaseWhoseRemoteRenewTimeLiesInTheFutureOnceItStopsChanging() throws Exception {
    createLeaseHeldBy("fast-clock-node", ZonedDateTime.now().plusHours(1));

    long started = System.nanoTime();
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      Optional<ServiceLog.Entry> taken = log.await("a", ServiceLog.Kind.START, started,
          MockApi.LEASE_DURATION.plusSeconds(3));

      assertThat(taken).isPresent();
      assertThat(Duration.ofNanos(taken.get().nanos() - started)).isGreaterThanOrEqualTo(MockApi.LEASE_DURATION)
          .isLessThan(MockApi.LEASE_DURATION.plus(MockApi.RETRY_PERIOD.multipliedBy(2)).plusSeconds(1));
    }
  }

  @Test
  void followerHonoursAnotherHoldersLeaseDurationInFullEvenBeyondAnHour() throws Exception {
    Duration twoHours = Duration.ofHours(2);
    api.client().leases().inNamespace(MockApi.NAMESPACE).resource(new LeaseBuilder()
        .withNewMetadata().withName(MockApi.LEASE).withNamespace(MockApi.NAMESPACE).endMetadata()
        .withNewSpec()
        .withHolderIdentity("long-lease-node")
        .withLeaseDurationSeconds((int) twoHours.getSeconds())
        .withRenewTime(ZonedDateTime.now())
        .withLeaseTransitions(4)
        .endSpec()
        .build()).create();
    java.util.concurrent.atomic.AtomicLong offset = new java.util.concurrent.atomic.AtomicLong();
    try (ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(log.service("a"))
        .ticker(() -> System.nanoTime() + offset.get())
        .start()) {
      assertThat(Replica.awaitTrue(
          () -> a.state().equals(new ElectionState.Following(Optional.of("long-lease-node"))),
          Duration.ofSeconds(5))).isTrue();

      // An hour and five seconds later the holder, which may be cut off but still within its own two-hour
      // promise, keeps its term: the old one-hour cap would have taken over here.
      long pastAnHour = System.nanoTime();
      offset.addAndGet(Duration.ofHours(1).plusSeconds(5).toNanos());
      assertThat(log.await("a", ServiceLog.Kind.START, pastAnHour, Duration.ofSeconds(2))).isEmpty();

      long pastTwoHours = System.nanoTime();
      offset.addAndGet(Duration.ofHours(1).toNanos());
      assertThat(log.await("a", ServiceLog.Kind.START, pastTwoHours, Duration.ofSeconds(3))).isPresent();
    }
  }

  @Test
  void leaderWhoseLeaseWasTakenStopsAtItsNextRenewalWithoutWaitingForTheDeadline() throws Exception {
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(log.await("a", ServiceLog.Kind.START, 0, Duration.ofSeconds(5))).isPresent();

      long beforeTaking = System.nanoTime();
      // Re-reads after a conflict: the leader renews every retry period, and each api.client() is a new client,
      // so the time is taken once the intruder's write is stored.
      api.takeLeaseAs("intruder");
      long taken = System.nanoTime();
      Optional<ServiceLog.Entry> stopped = log.await("a", ServiceLog.Kind.STOP, beforeTaking,
          Duration.ofSeconds(3));

      assertThat(stopped).isPresent();
      assertThat(Duration.ofNanos(stopped.get().nanos() - taken))
          .isLessThan(MockApi.RETRY_PERIOD.plusMillis(700));
      assertThat(a.runner.state()).isEqualTo(new ElectionState.Following(Optional.of("intruder")));
      Thread.sleep(MockApi.RETRY_PERIOD.toMillis() * 3);
      assertThat(api.lease().getSpec().getHolderIdentity()).isEqualTo("intruder");
    }
  }

  @Test
  void replicasStartingTogetherOnAMissingLeaseElectExactlyOne() throws Exception {
    java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.ExecutorService starters = java.util.concurrent.Executors.newFixedThreadPool(2);
    io.fabric8.kubernetes.client.KubernetesClient aClient = api.client();
    io.fabric8.kubernetes.client.KubernetesClient bClient = api.client();
    java.util.concurrent.Future<Replica> aStart = starters.submit(() -> {
      go.await();
      return Replica.start("a", aClient, MockApi.fastSettings("a").build(), log);
    });
    java.util.concurrent.Future<Replica> bStart = starters.submit(() -> {
      go.await();
      return Replica.start("b", bClient, MockApi.fastSettings("b").build(), log);
    });
    go.countDown();
    try (Replica a = aStart.get(); Replica b = bStart.get()) {
      assertThat(Replica.awaitTrue(() -> a.leads() || b.leads(), Duration.ofSeconds(5))).isTrue();
      Thread.sleep(500);

      assertThat(a.leads() ^ b.leads()).isTrue();
      assertThat(log.running()).hasSize(1);
      assertThat(log.overlap()).isEmpty();
    } finally {
      starters.shutdown();
    }
  }
}
