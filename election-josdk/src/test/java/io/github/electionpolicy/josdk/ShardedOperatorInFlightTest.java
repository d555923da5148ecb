package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A reconciliation still running when its shard moves away: the old owner's {@code stop(shard)} returns only once it
 * ended, so the shard's Lease is released, and the new owner reconciles the widget, only afterwards; the other shards
 * move meanwhile.
 */
class ShardedOperatorInFlightTest {

  // A stop timeout (leaseDuration - renewDeadline) of 10 s: room for the held reconciliation on a busy machine.
  private static final UnaryOperator<LeaseSettings.Builder> ROOMY = settings -> settings
      .leaseDuration(Duration.ofSeconds(12)).renewDeadline(Duration.ofSeconds(2));

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  @Test
  void aShardMovesOnlyOnceItsRunningReconciliationEnded() throws InterruptedException {
    try (ShardedReplicas cluster = new ShardedReplicas(api)) {
      Map<String, String> uids = cluster.createWidgets(1);
      int heldShard = Shards.of(ShardedReplicas.SHARDS).shardOf(uids.get("w-0"));
      CountDownLatch entered = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      cluster.hook = (identity, widget) -> {
        if (identity.equals("pod-a")) {
          entered.countDown();
          release.await(30, TimeUnit.SECONDS);
        }
      };
      ShardedReplicas.Replica a = cluster.start("pod-a", ROOMY);
      assertThat(entered.await(60, TimeUnit.SECONDS)).as("pod-a reconciles w-0").isTrue();
      ShardedReplicas.Replica b = cluster.start("pod-b", ROOMY);

      Thread closing = new Thread(a.runner()::close, "closing-pod-a");
      closing.start();
      Await.until("pod-b took every shard but the held one",
          () -> b.runner().ownedShards().size() == ShardedReplicas.SHARDS - 1, Duration.ofSeconds(20));
      assertThat(b.runner().ownedShards()).doesNotContainKey(heldShard);
      assertThat(cluster.reconciledBy("w-0", "pod-b")).isFalse();
      assertThat(closing.isAlive()).as("pod-a's close waits for its shard's reconciliation").isTrue();

      release.countDown();
      Await.until("pod-b reconciled w-0 once pod-a's reconciliation ended",
          () -> cluster.reconciledBy("w-0", "pod-b"), Duration.ofSeconds(20));
      closing.join(TimeUnit.SECONDS.toMillis(20));
      assertThat(closing.isAlive()).isFalse();
      a.operator().close();
      assertThat(cluster.violations).isEmpty();
    }
  }
}
