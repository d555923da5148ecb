package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The adapter's election against a real kube-apiserver 1.20 and etcd, through the fixture pointed at it
 * ({@code -Delection.it.kubeconfig}, which the POM sets): each test has a namespace of its own, each replica a
 * client of its own behind a TCP proxy that passes TLS through.
 */
class RealElectionIT {

  static final String LEASE = MockApi.LEASE;

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();
  private final ServiceLog log = new ServiceLog();

  LeaseSettings.Builder settings(String identity) {
    return MockApi.fastSettings(identity).namespace(api.namespace());
  }

  private Optional<Lease> lease() {
    return api.lease(LEASE);
  }

  @Test
  void theFixtureTalksToTheRealServer() {
    assertThat(api.isEmbedded()).isFalse();
    assertThat(api.url()).startsWith("https://127.0.0.1:");
    assertThat(api.client().getKubernetesVersion().getMinor()).isEqualTo("20");
  }

  @Test
  void ofThreeReplicasExactlyOneLeadsAndTheOthersFollowIt() throws Exception {
    try (Replica a = Replica.start("a", api.replica("a").client(), settings("a").build(), log);
        Replica b = Replica.start("b", api.replica("b").client(), settings("b").build(), log);
        Replica c = Replica.start("c", api.replica("c").client(), settings("c").build(), log)) {
      List<Replica> replicas = List.of(a, b, c);
      assertThat(Replica.awaitTrue(() -> replicas.stream().filter(Replica::leads).count() == 1
          && replicas.stream().filter(r -> !r.leads()).allMatch(r -> r.runner.state()
              instanceof ElectionState.Following f && f.leader().isPresent()), Duration.ofSeconds(20)))
          .as("one leader, two followers that know it").isTrue();
      Replica leader = replicas.stream().filter(Replica::leads).findFirst().orElseThrow();
      // Two lease durations of the leader's renewals, during which a follower could (wrongly) take over.
      int renewals = (int) (MockApi.LEASE_DURATION.toMillis() * 2 / MockApi.RETRY_PERIOD.toMillis());
      assertThat(RealServerRecord.awaitWrites(api, LEASE, leader.name, renewals)).as("the leader renews").isTrue();

      assertThat(replicas.stream().filter(Replica::leads)).containsExactly(leader);
      assertThat(log.running()).containsExactly(leader.name);
      assertThat(lease().orElseThrow().getSpec().getHolderIdentity()).isEqualTo(leader.name);
      assertThat(log.overlap()).isEmpty();
    }
  }

  @Test
  void aGracefulCloseHandsOverThroughAnEmptyHolder() throws Exception {
    List<String> holders = api.watchHolders(LEASE);
    try (Replica a = Replica.startLeader("a", api.replica("a").client(), settings("a").build(), log);
        Replica b = Replica.start("b", api.replica("b").client(), settings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
          Duration.ofSeconds(10))).isTrue();

      long closing = System.nanoTime();
      a.close();
      Optional<ServiceLog.Entry> takeover = log.await("b", ServiceLog.Kind.START, closing, Duration.ofSeconds(10));

      assertThat(takeover).as("b takes over after a's graceful close").isPresent();
      System.out.println("MEASURED real server graceful hand-over: "
          + Duration.ofNanos(takeover.get().nanos() - closing).toMillis() + " ms");
      assertThat(Replica.awaitTrue(() -> holders.contains("b"), Duration.ofSeconds(5))).isTrue();
      assertThat(holders).containsSubsequence("a", "", "b");
      assertThat(log.overlap()).isEmpty();
    }
  }

  /**
   * The leader's process dies (its connections are dropped and refused): b takes the Lease only once the
   * leader's last renewal has expired, by the Lease's own timestamps, which both replicas wrote with one clock.
   */
  @Test
  void aCrashedLeaderIsTakenOverOnlyAfterItsLeaseExpired() throws Exception {
    ReplicaLink linkA = api.replica("a");
    Replica a = Replica.startLeader("a", linkA.client(), settings("a").build(), log);
    try (Replica b = Replica.start("b", api.replica("b").client(), settings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
          Duration.ofSeconds(10))).isTrue();

      long crash = System.nanoTime();
      linkA.refuseConnections();
      log.crashed("a");
      Optional<ServiceLog.Entry> takeover = log.await("b", ServiceLog.Kind.START, crash, Duration.ofSeconds(15));
      a.close();

      assertThat(takeover).as("b takes over a crashed leader").isPresent();
      System.out.println("MEASURED real server crash take-over: "
          + Duration.ofNanos(takeover.get().nanos() - crash).toMillis() + " ms after the crash");
      assertTakenOverOnlyAfterExpiry("a", "b");
    }
  }

  /** The leader alone is cut off (requests hang): it stops at its renew deadline, before b may take over. */
  @Test
  void aPartitionedLeaderStopsBeforeTheOtherTakesOver() throws Exception {
    ReplicaLink linkA = api.replica("a");
    try (Replica a = Replica.startLeader("a", linkA.client(), settings("a").build(), log);
        Replica b = Replica.start("b", api.replica("b").client(), settings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
          Duration.ofSeconds(10))).isTrue();

      long cut = System.nanoTime();
      linkA.partition();
      Optional<ServiceLog.Entry> stopped = log.await("a", ServiceLog.Kind.STOP, cut, Duration.ofSeconds(10));
      Optional<ServiceLog.Entry> takeover = log.await("b", ServiceLog.Kind.START, cut, Duration.ofSeconds(15));

      assertThat(stopped).as("a stops its services on its own, cut off").isPresent();
      assertThat(takeover).as("b takes over").isPresent();
      assertThat(stopped.get().nanos()).isLessThan(takeover.get().nanos());
      assertThat(Duration.ofNanos(stopped.get().nanos() - cut))
          .as("a stopped within its renew deadline (plus the slack a loaded machine needs)")
          .isLessThan(MockApi.RENEW_DEADLINE.plusSeconds(2));
      assertThat(log.overlap()).isEmpty();
      assertTakenOverOnlyAfterExpiry("a", "b");
      linkA.heal();
    }
  }

  @Test
  void aDeletedLeaseStopsTheLeaderBeforeAnyoneLeadsAgain() throws Exception {
    try (Replica a = Replica.startLeader("a", api.replica("a").client(), settings("a").build(), log);
        Replica b = Replica.start("b", api.replica("b").client(), settings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
          Duration.ofSeconds(10))).isTrue();
      LeadershipTerm oldTerm = a.runner.currentTerm().orElseThrow();

      long deleted = System.nanoTime();
      api.client().leases().inNamespace(api.namespace()).withName(LEASE).delete();
      Optional<ServiceLog.Entry> oldLeaderStopped = log.await("a", ServiceLog.Kind.STOP, deleted,
          Duration.ofSeconds(10));
      Optional<ServiceLog.Entry> nextStart = log.await(null, ServiceLog.Kind.START, deleted, Duration.ofSeconds(15));

      assertThat(oldLeaderStopped).as("the old leader treats the deletion as a loss").isPresent();
      assertThat(nextStart).as("someone leads again").isPresent();
      assertThat(oldLeaderStopped.get().nanos()).isLessThan(nextStart.get().nanos());
      assertThat(nextStart.get().term().leaseTransitions()).isGreaterThan(oldTerm.leaseTransitions());
      assertThat(log.overlap()).isEmpty();
    }
  }

  @Test
  void aForeignWriterTakingTheLeaseStopsTheLeader() throws Exception {
    try (Replica a = Replica.startLeader("a", api.replica("a").client(), settings("a").build(), log)) {
      long written = System.nanoTime();
      api.overwriteHolder(LEASE, "intruder");
      Optional<ServiceLog.Entry> stopped = log.await("a", ServiceLog.Kind.STOP, written, Duration.ofSeconds(10));

      assertThat(stopped).as("a sees the foreign holder and stops").isPresent();
      assertThat(Replica.awaitTrue(() -> a.runner.state().kind() != ElectionState.Kind.LEADING,
          Duration.ofSeconds(5))).isTrue();
      // The intruder never renews: once its lease expired, a (RECONTEND) leads again, in a later term.
      Optional<ServiceLog.Entry> again = log.await("a", ServiceLog.Kind.START, stopped.get().nanos(),
          Duration.ofSeconds(15));
      assertThat(again).isPresent();
      assertThat(Duration.ofNanos(again.get().nanos() - written))
          .as("a waited out the intruder's lease, counted from when it saw the intruder's write")
          .isGreaterThanOrEqualTo(MockApi.LEASE_DURATION);
      assertThat(log.overlap()).isEmpty();
      assertThat(RealServerRecord.upToNow(api, LEASE)).extracting(LeaseWrite::holder)
          .containsSubsequence("a", "intruder", "a");
    }
  }

  /** Election off: the runner starts its services at once and its client opens not one connection. */
  @Test
  void runningUnelectedSendsNothing() throws Exception {
    ReplicaLink link = api.replica("a");
    try (ElectionRunner runner = ElectionRunner.builder()
        .client(link.client())
        .decision(MockApi.RUN_UNELECTED)
        .settings(settings("a").build())
        .service(log.service("a"))
        .start()) {
      assertThat(Replica.awaitTrue(() -> log.running().contains("a"), Duration.ofSeconds(5))).isTrue();
      // Must wait: the check is that nothing is sent for a lease duration, and nothing marks that time.
      Thread.sleep(MockApi.LEASE_DURATION.toMillis());
      assertThat(runner.state().kind()).isEqualTo(ElectionState.Kind.NOT_CONTENDING);
    }
    assertThat(link.connectionCount()).isZero();
    assertThat(lease()).isEmpty();
  }

  /**
   * The expiry check is not vacuous: a holder written over a live Lease (a foreign writer's early take-over, with
   * an acquireTime before the old holder's renewal expired) fails it.
   */
  @Test
  void theExpiryCheckCatchesATakeOverBeforeTheLeaseExpired() throws Exception {
    try (Replica a = Replica.startLeader("a", api.replica("a").client(), settings("a").build(), log)) {
      assertThat(RealServerRecord.awaitWrites(api, LEASE, "a", 2)).as("a renews").isTrue();
      // A conditional write, as a foreign writer makes it: re-read and retry on the leader's renewals' 409s.
      for (int attempt = 0; ; attempt++) {
        Lease current = lease().orElseThrow();
        current.getSpec().setHolderIdentity("early");
        current.getSpec().setAcquireTime(ZonedDateTime.now());
        try {
          api.client().leases().inNamespace(api.namespace()).resource(current).update();
          break;
        } catch (KubernetesClientException e) {
          if (e.getCode() != 409 || attempt == 50) {
            throw e;
          }
        }
      }
      assertThat(Replica.awaitTrue(() -> api.leaseWrites(LEASE).stream().anyMatch(w -> w.holder().equals("early")),
          Duration.ofSeconds(5))).isTrue();

      assertThatThrownBy(() -> assertTakenOverOnlyAfterExpiry("a", "early"))
          .isInstanceOf(AssertionError.class)
          .hasMessageContaining("early acquired at");
    }
  }

  /**
   * Every change of holder in the server's record of Lease writes came after the previous holder's last renewal
   * had expired: {@code acquireTime(new) >= renewTime(old last) + leaseDuration}. The record is read once it holds
   * the Lease as the server holds it now ({@link RealServerRecord}): a replica's START can come before the
   * fixture's watch delivered the write that won its term.
   */
  private void assertTakenOverOnlyAfterExpiry(String oldHolder, String newHolder) throws InterruptedException {
    List<LeaseWrite> writes = RealServerRecord.upToNow(api, LEASE);
    List<String> holders = RealServerRecord.describe(writes);
    LeaseSpec last = writes.stream().filter(w -> w.holder().equals(oldHolder)).reduce((x, y) -> y)
        .orElseThrow(() -> new AssertionError("no write by " + oldHolder + " in the record " + holders)).spec();
    LeaseSpec next = writes.stream().filter(w -> w.holder().equals(newHolder)).findFirst()
        .orElseThrow(() -> new AssertionError("no write by " + newHolder + " in the record " + holders)).spec();
    ZonedDateTime expiry = last.getRenewTime().plusSeconds(last.getLeaseDurationSeconds());
    assertThat(next.getAcquireTime())
        .as("%s acquired at %s, %s's lease expired at %s", newHolder, next.getAcquireTime(), oldHolder, expiry)
        .isAfterOrEqualTo(expiry);
  }
}
