package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A custom loss handler that answers {@link LossHandler.AfterLoss#STOP} for a shard's lost term stops the replica, as
 * it stops an {@link ElectionRunner}: it contends for nothing more (that shard's included), gives up its other shards
 * and leaves, with a failure that says why; it is not ready, and not live once its health budget passed. The term is
 * lost as most are, by its renewals failing until the renew deadline. Before, the shard's runner stopped but the
 * replica contended for the shard again at once: STOP had no effect on a sharded runner (review r1).
 */
class ShardedRunnerStopOnLossTest {

  private final ShardedRunnerFaultsTest.Faults faults = new ShardedRunnerFaultsTest.Faults();

  @RegisterExtension
  final MockApi api = new MockApi(faults::around);

  private ShardedRunner a;

  @AfterEach
  void close() {
    faults.clear();
    if (a != null) {
      a.close();
    }
  }

  @Test
  void aShardLostUnderAHandlerThatSaysStopStopsTheReplica() throws InterruptedException {
    List<String> calls = new CopyOnWriteArrayList<>();
    List<LeadershipTerm> lost = new CopyOnWriteArrayList<>();
    a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").lossPolicy(LossPolicy.custom(term -> {
          lost.add(term);
          return LossHandler.AfterLoss.STOP;
        })).build())
        .shards(2)
        .service(ShardService.of((shard, term) -> calls.add("start " + shard), shard -> calls.add("stop " + shard)))
        .start();
    Await.until("pod-a owns both shards", () -> a.ownedShards().size() == 2, Duration.ofSeconds(15), a::toString);

    faults.add(request -> "PUT".equals(request.getMethod())
        && ShardedRunnerFaultsTest.path(request).endsWith(ShardedRunnerFaultsTest.shardLease(0))
        ? ShardedRunnerFaultsTest.status(500, "InternalError") : null);

    assertThat(a.awaitStopped(Duration.ofSeconds(15))).as("pod-a stopped: " + a + ", calls " + calls).isTrue();
    assertThat(lost).as("the handler heard the loss of shard 0's term").hasSize(1);
    assertThat(a.failure()).as("why it stopped").hasValueSatisfying(failure ->
        assertThat(failure).hasMessageContaining("loss policy").hasMessageContaining("STOP"));
    assertThat(a.health().ready()).isFalse();
    assertThat(a.ownedShards()).isEmpty();
    // As an ElectionRunner that stopped: live until the health budget passed without a Lease request, then not.
    Await.until("pod-a not live", () -> !a.health().live(), Duration.ofSeconds(15), () -> a.health().toString());
    assertThat(calls).as("each shard started once and stopped once, never started again")
        .containsExactlyInAnyOrder("start 0", "start 1", "stop 0", "stop 1");
  }

  /**
   * A loss under RECONTEND whose shard's stop() threw also stops the shard's runner with cause LOST (its work may
   * still run, so it contends no more): the replica leaves as having abandoned a shard, and failure() says so. It must
   * not say the loss policy said not to contend again, nor tell the user to answer RECONTEND, which it did (review
   * h-review: 37897a1 took every LOST for a handler's STOP, and its reason came first).
   */
  @Test
  void aShardWhoseStopThrewAfterALossUnderRecontendIsReportedAsAbandonedNotAsAStop() throws InterruptedException {
    List<String> calls = new CopyOnWriteArrayList<>();
    a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").build())
        .shards(2)
        .service(ShardService.of((shard, term) -> calls.add("start " + shard), shard -> {
          calls.add("stop " + shard);
          if (shard == 0) {
            throw new IllegalStateException("shard 0's work would not stop");
          }
        }))
        .start();
    Await.until("pod-a owns both shards", () -> a.ownedShards().size() == 2, Duration.ofSeconds(15), a::toString);

    faults.add(request -> "PUT".equals(request.getMethod())
        && ShardedRunnerFaultsTest.path(request).endsWith(ShardedRunnerFaultsTest.shardLease(0))
        ? ShardedRunnerFaultsTest.status(500, "InternalError") : null);

    assertThat(a.awaitStopped(Duration.ofSeconds(15))).as("pod-a stopped: " + a + ", calls " + calls).isTrue();
    assertThat(a.failure()).as("why it stopped").hasValueSatisfying(failure -> assertThat(failure)
        .hasMessageContaining("stop() threw or outlived the stop timeout").hasMessageNotContaining("loss policy"));
  }

  /**
   * A foreign write of a shard's Lease (another holder, outside the members) loses the shard's term; its runner then
   * contends for a shard the plan no longer gives this replica, so the coordinator closes it on a plan while the
   * handler still runs. That close is the replica's own, not the user's: it yields to the handler's STOP, and the
   * replica stops, as for a loss by the renew deadline. Before, the close answered the loss, the runner stopped
   * CLOSED, and the replica went on as if the handler had said RECONTEND (the known gap of docs/sharding.md).
   */
  @Test
  void aForeignWriteOfAShardsLeaseUnderAHandlerThatSaysStopStopsTheReplica() throws InterruptedException {
    List<LeadershipTerm> lost = new CopyOnWriteArrayList<>();
    java.util.concurrent.atomic.AtomicBoolean planned = new java.util.concurrent.atomic.AtomicBoolean();
    String member = ShardedRunnerFaultsTest.memberLease("pod-a");
    a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").lossPolicy(LossPolicy.custom(term -> {
          lost.add(term);
          // The coordinator plans every half retry period: two renewals of the membership Lease after the loss mean
          // it planned with the runner contending and the view showing the foreign holder, so its close came in.
          long from = System.nanoTime();
          try {
            planned.set(Await.holds(() -> api.fixture.leaseWrites(member).stream()
                .filter(write -> write.receivedNanos() - from > 0).count() >= 2, Duration.ofSeconds(10)));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return LossHandler.AfterLoss.STOP;
        })).build())
        .shards(2)
        .service(ShardService.of((shard, term) -> { }, shard -> { }))
        .start();
    Await.until("pod-a owns both shards", () -> a.ownedShards().size() == 2, Duration.ofSeconds(15), a::toString);

    api.fixture.overwriteHolder(ShardedRunnerFaultsTest.shardLease(0), "thief");

    assertThat(a.awaitStopped(Duration.ofSeconds(15))).as("pod-a stopped: " + a).isTrue();
    assertThat(lost).as("the handler heard the loss of shard 0's term").hasSize(1);
    assertThat(planned).as("the coordinator planned while the handler ran").isTrue();
    assertThat(a.failure()).as("why it stopped").hasValueSatisfying(failure ->
        assertThat(failure).hasMessageContaining("loss policy").hasMessageContaining("STOP"));
  }

  /**
   * The user's close() while a shard's loss handler runs, after the coordinator's own close of that shard's runner
   * (which yields to the handler's answer), is a close: as for an ElectionRunner, a close during a loss answers the
   * loss, so it returns without waiting for the handler, which may never return.
   */
  @Test
  void theUsersCloseWhileAHandlerRunsAfterTheCoordinatorsCloseDoesNotWaitForTheHandler() throws Exception {
    java.util.concurrent.CountDownLatch handling = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch answer = new java.util.concurrent.CountDownLatch(1);
    String member = ShardedRunnerFaultsTest.memberLease("pod-a");
    a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").lossPolicy(LossPolicy.custom(term -> {
          handling.countDown();
          try {
            answer.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return LossHandler.AfterLoss.STOP;
        })).build())
        .shards(2)
        .service(ShardService.of((shard, term) -> { }, shard -> { }))
        .start();
    try {
      Await.until("pod-a owns both shards", () -> a.ownedShards().size() == 2, Duration.ofSeconds(15), a::toString);
      api.fixture.overwriteHolder(ShardedRunnerFaultsTest.shardLease(0), "thief");
      assertThat(handling.await(15, java.util.concurrent.TimeUnit.SECONDS)).as("the handler runs").isTrue();
      // Two renewals of the membership Lease after the handler began: the coordinator planned with the view showing
      // the foreign holder, and closed shard 0's runner (a close that waits for the handler's answer).
      long from = System.nanoTime();
      assertThat(Await.holds(() -> api.fixture.leaseWrites(member).stream()
          .filter(write -> write.receivedNanos() - from > 0).count() >= 2, Duration.ofSeconds(10))).isTrue();

      java.util.concurrent.CompletableFuture<Void> closed = java.util.concurrent.CompletableFuture.runAsync(a::close);
      assertThat(Await.holds(closed::isDone, Duration.ofSeconds(15)))
          .as("close() returned while the handler still runs: " + a).isTrue();
      assertThat(a.failure()).as("closed, not stopped on its own").isEmpty();
    } finally {
      answer.countDown();
    }
  }

  /**
   * FINDING (review h-rev2 C): the user's close() after the replica began to leave on its own (another shard's handler
   * said STOP) still answers a loss the coordinator's close left to the policy. Shard 0's handler waits; the
   * coordinator closes shard 0's runner (the owner's close, which yields to the handler); shard 1's handler says STOP,
   * so the replica leaves on its own (ShardDriver.leaveOnItsOwn sets closeRequested). Then ShardDriver.requestClose's
   * compare-and-set fails, closeIfOwnerClosed (8cd5cfa) is never sent, and close() waits for shard 0's handler, for
   * ever if it hangs: a close during a loss answers the loss (docs/sharding.md).
   */
  @Test
  void theUsersCloseAfterALeaveOnItsOwnDoesNotWaitForAHandlerTheCoordinatorClosed() throws Exception {
    java.util.concurrent.CountDownLatch handling = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch answer = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
    String member = ShardedRunnerFaultsTest.memberLease("pod-a");
    a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").lossPolicy(LossPolicy.custom(term -> {
          if (calls.incrementAndGet() > 1) {
            return LossHandler.AfterLoss.STOP; // shard 1's: the replica leaves on its own
          }
          handling.countDown();
          try {
            answer.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return LossHandler.AfterLoss.STOP;
        })).build())
        .shards(2)
        .service(ShardService.of((shard, term) -> { }, shard -> { }))
        .start();
    try {
      Await.until("pod-a owns both shards", () -> a.ownedShards().size() == 2, Duration.ofSeconds(15), a::toString);
      api.fixture.overwriteHolder(ShardedRunnerFaultsTest.shardLease(0), "thief");
      assertThat(handling.await(15, java.util.concurrent.TimeUnit.SECONDS)).as("shard 0's handler runs").isTrue();
      // Two renewals of the membership Lease after the handler began: the coordinator closed shard 0's runner.
      long from = System.nanoTime();
      assertThat(Await.holds(() -> api.fixture.leaseWrites(member).stream()
          .filter(write -> write.receivedNanos() - from > 0).count() >= 2, Duration.ofSeconds(10))).isTrue();
      api.fixture.overwriteHolder(ShardedRunnerFaultsTest.shardLease(1), "thief");
      assertThat(Await.holds(() -> a.failure().isPresent(), Duration.ofSeconds(15)))
          .as("the replica leaves on its own on shard 1's STOP: " + a).isTrue();

      java.util.concurrent.CompletableFuture<Void> closed = java.util.concurrent.CompletableFuture.runAsync(a::close);
      assertThat(Await.holds(closed::isDone, Duration.ofSeconds(15)))
          .as("close() returned while shard 0's handler still runs: " + a).isTrue();
    } finally {
      answer.countDown();
    }
  }

  /**
   * A close() from the loss handler, before it answers STOP, closes the replica: as for an ElectionRunner, whose close
   * during a loss answers the loss, the replica stopped because it was closed, and failure() is empty.
   */
  @Test
  void aCloseFromTheLossHandlerBeforeItAnswersStopIsAClose() throws InterruptedException {
    a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").lossPolicy(LossPolicy.custom(term -> {
          a.close();
          return LossHandler.AfterLoss.STOP;
        })).build())
        .shards(2)
        .service(ShardService.of((shard, term) -> { }, shard -> { }))
        .start();
    Await.until("pod-a owns both shards", () -> a.ownedShards().size() == 2, Duration.ofSeconds(15), a::toString);

    faults.add(request -> "PUT".equals(request.getMethod())
        && ShardedRunnerFaultsTest.path(request).endsWith(ShardedRunnerFaultsTest.shardLease(0))
        ? ShardedRunnerFaultsTest.status(500, "InternalError") : null);

    assertThat(a.awaitStopped(Duration.ofSeconds(15))).as("pod-a stopped: " + a).isTrue();
    assertThat(a.failure()).as("closed, not stopped on its own").isEmpty();
  }
}
