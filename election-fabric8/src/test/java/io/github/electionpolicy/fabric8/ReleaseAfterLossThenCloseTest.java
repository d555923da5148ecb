package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Review h-relloss: a runner whose term was lost, whose services then stopped cleanly, and which is then closed (by its
 * user while the CUSTOM loss handler runs, or by its owner, a sharded replica's coordinator, while the loss's stops run
 * under RECONTEND) releases the Lease if it still shows exactly what this runner last wrote, so that the next holder
 * takes it at once instead of waiting a lease duration. Before, the lifecycle commanded "end contention; finish elector:
 * release": the elector ended its protocol at the "end contention" (LeaseElector.afterLoss, no finish there yet) and
 * ignored the release. Each term here is lost as most are, by its renewals failing until the renew deadline (the Lease
 * then still shows the last renewal that landed). A Lease written by someone else since is never released.
 */
class ReleaseAfterLossThenCloseTest {

  private final ShardedRunnerFaultsTest.Faults faults = new ShardedRunnerFaultsTest.Faults();

  @RegisterExtension
  final MockApi api = new MockApi(faults::around).answeringAccessReviews();

  /** Red before the fix (the Lease still named "a"), green after. */
  @Test
  void aCloseWhileTheHandlerRunsAfterACleanStopReleasesTheLease() throws Exception {
    assertThat(holderAfterACloseDuringTheHandler(false)).as("released: no holder").isNullOrEmpty();
  }

  /** Green before and after: the guard of the release is the resourceVersion this runner read as its own write. */
  @Test
  void aCloseWhileTheHandlerRunsNeverReleasesALeaseAnotherWroteSince() throws Exception {
    assertThat(holderAfterACloseDuringTheHandler(true)).as("b's write stands").isEqualTo("b");
  }

  /**
   * The owner's close (LifecycleDriver.requestClose(true), what ShardDriver.closeShard sends) while the loss's stops run
   * under RECONTEND: the policy's answer is to contend again, so the runner closes instead, and releases. Red before the
   * fix, green after.
   */
  @Test
  void theOwnersCloseDuringALossUnderRecontendReleasesTheLease() throws Exception {
    assertThat(holderAfterACloseDuringTheLossStops(true)).as("released: no holder").isNullOrEmpty();
  }

  /**
   * The user's close while the loss's stops run: the stops over, the runner closes, and releases. Red before the fix,
   * green after.
   */
  @Test
  void theUsersCloseDuringTheLossStopsReleasesTheLease() throws Exception {
    assertThat(holderAfterACloseDuringTheLossStops(false)).as("released: no holder").isNullOrEmpty();
  }

  /** The holder the Lease shows after a close while the loss's stop runs (the owner's, or the user's). */
  private String holderAfterACloseDuringTheLossStops(boolean owner) throws Exception {
    CountDownLatch stopping = new CountDownLatch(1);
    CountDownLatch letStop = new CountDownLatch(1);
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(LeaderService.of(term -> { }, () -> {
          stopping.countDown();
          await(letStop);
        }))
        .start();
    try {
      Await.until("a leads", () -> a.state() instanceof ElectionState.Leading);
      failRenewals(MockApi.LEASE);
      assertThat(stopping.await(15, TimeUnit.SECONDS)).as("the services stop after the loss").isTrue();
      faults.clear(); // the API server answers again: the Lease still shows a's last renewal

      if (owner) {
        a.driverForTest().requestClose(true);
      } else {
        a.driverForTest().requestClose(); // close() without waiting: the stop waits for this test
      }
      letStop.countDown();

      assertThat(a.awaitStopped(Duration.ofSeconds(15))).as("stopped: " + a.state()).isTrue();
      assertThat(a.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
      return api.lease().getSpec().getHolderIdentity();
    } finally {
      letStop.countDown();
      a.close();
    }
  }

  /**
   * The sharded path: shard 0's term is lost, its stop is still running when the membership Lease is lost too (a
   * foreign write), so the coordinator closes shard 0's runner with the owner's close; under RECONTEND the runner then
   * closes after its clean stop, and releases shard 0's Lease, so that the shard moves at once. Red before the fix (no
   * release: the shard waited out its lease duration), green after.
   */
  @Test
  void aShardRunnerClosedByItsOwnerDuringALossReleasesTheShardsLease() throws Exception {
    CountDownLatch stopping = new CountDownLatch(1);
    CountDownLatch letStop = new CountDownLatch(1);
    AtomicBoolean first = new AtomicBoolean(true);
    String shardLease = ShardedRunnerFaultsTest.shardLease(0);
    ShardedRunner a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").build())
        .shards(1)
        .service(ShardService.of((shard, term) -> { }, shard -> {
          if (first.getAndSet(false)) {
            stopping.countDown();
            await(letStop);
          }
        }))
        .start();
    try {
      Await.until("pod-a owns shard 0", () -> a.ownedShards().containsKey(0), Duration.ofSeconds(15), a::toString);
      failRenewals(shardLease);
      assertThat(stopping.await(15, TimeUnit.SECONDS)).as("shard 0's work stops after its loss").isTrue();
      api.fixture.overwriteHolder(ShardedRunnerFaultsTest.memberLease("pod-a"), "thief");
      // The snapshot is published after the coordinator's step: it shows the membership lost once the coordinator
      // took the loss in, and closed shard 0's runner with the owner's close.
      Await.until("pod-a's membership lost", () -> a.health().state() instanceof ElectionState.Following,
          Duration.ofSeconds(15), a::toString);
      faults.clear(); // shard 0's Lease still shows pod-a's last renewal
      long from = System.nanoTime();

      letStop.countDown();

      assertThat(Await.holds(() -> releasesOf(shardLease, from) > 0, MockApi.LEASE_DURATION))
          .as("shard 0's Lease released within a lease duration; writes: %s", api.fixture.leaseWrites(shardLease))
          .isTrue();
    } finally {
      letStop.countDown();
      a.close();
    }
  }

  /** The holder the Lease shows after a close() while the handler runs; {@code foreign}: "b" wrote it meanwhile. */
  private String holderAfterACloseDuringTheHandler(boolean foreign) throws Exception {
    CountDownLatch handling = new CountDownLatch(1);
    CountDownLatch answer = new CountDownLatch(1);
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.custom(term -> {
      handling.countDown();
      await(answer);
      return LossHandler.AfterLoss.STOP;
    })).build();
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(LeaderService.of(term -> { }, () -> { }))
        .start();
    try {
      Await.until("a leads", () -> a.state() instanceof ElectionState.Leading);
      failRenewals(MockApi.LEASE);
      assertThat(handling.await(15, TimeUnit.SECONDS)).as("the handler runs after the loss").isTrue();
      faults.clear(); // the API server answers again: the Lease still shows a's last renewal
      if (foreign) {
        api.takeLeaseAs("b");
      }

      a.close();

      assertThat(a.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
      return api.lease().getSpec().getHolderIdentity();
    } finally {
      answer.countDown();
      a.close();
    }
  }

  private void failRenewals(String lease) {
    faults.add(request -> "PUT".equals(request.getMethod())
        && ShardedRunnerFaultsTest.path(request).endsWith("/" + lease)
        ? ShardedRunnerFaultsTest.status(500, "InternalError") : null);
  }

  private long releasesOf(String lease, long afterNanos) {
    List<LeaseWrite> writes = api.fixture.leaseWrites(lease);
    return writes.stream().filter(write -> write.holder().isEmpty() && write.receivedNanos() - afterNanos > 0).count();
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
