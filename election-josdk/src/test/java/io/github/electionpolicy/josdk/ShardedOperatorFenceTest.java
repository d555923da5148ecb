package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.fabric8.TermEndedException;
import io.github.electionpolicy.josdk.sample.Gadget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sharded operator's own client is fenced by the shard's term: what a reconciliation writes through it ({@code
 * context.getClient()}), and what JOSDK writes on its behalf (a status patch, a finalizer), reaches the server only
 * while the reconciliation's shard is owned here under the term it began with. Each test reads, from the embedded
 * server's log of requests, every write each replica sent.
 */
class ShardedOperatorFenceTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /**
   * pod-a's reconciliation of g-0 is held while pod-a closes; its shard's stop outlasts the stop timeout (2 s), so
   * pod-a's runner leaves the shard's Lease to expire, and pod-b takes it and reconciles g-0. Then pod-a's
   * reconciliation goes on and writes: its ConfigMap update and JOSDK's status patch are both refused, and the
   * server received no write of g-0 from pod-a, only pod-b's.
   */
  @Test
  void aReconciliationStillRunningAfterItsShardMovedWritesNothing() throws InterruptedException {
    try (ShardFenceReplicas cluster = new ShardFenceReplicas(api)) {
      cluster.create("g-0");
      CountDownLatch held = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      AtomicBoolean holding = new AtomicBoolean(true);
      cluster.hook = (identity, gadget) -> {
        if (identity.equals("pod-a") && holding.compareAndSet(true, false)) {
          held.countDown();
          release.await(60, TimeUnit.SECONDS);
        }
      };
      ShardedReplicas.Replica a = cluster.start("pod-a", ShardFenceReplicas.Kind.PLAIN);
      assertThat(held.await(60, TimeUnit.SECONDS)).as("pod-a reconciles g-0").isTrue();
      ShardedReplicas.Replica b = cluster.start("pod-b", ShardFenceReplicas.Kind.PLAIN);

      Thread closing = new Thread(a.runner()::close, "closing-pod-a");
      closing.start();
      Await.until("pod-b wrote g-0's ConfigMap and status", () -> writtenBy(cluster, "g-0", "pod-b"),
          Duration.ofSeconds(60));
      assertThat(b.runner().ownedShards()).containsKey(Shards.of(ShardFenceReplicas.SHARDS)
          .shardOf(cluster.gadget("g-0")));

      // JOSDK runs one reconciliation of a resource at a time: pod-a's next end of g-0 is the held one's.
      int before = cluster.finished.getOrDefault("pod-a", List.of()).size();
      release.countDown();
      Await.until("pod-a's held reconciliation ended", () -> {
        List<String> ends = cluster.finished.getOrDefault("pod-a", List.of());
        return ends.subList(before, ends.size()).contains("g-0");
      }, Duration.ofSeconds(60));
      closing.join(TimeUnit.SECONDS.toMillis(30));

      assertThat(cluster.writes("pod-a", "g-0")).as("pod-a's writes of g-0 the server received").isEmpty();
      assertThat(cluster.refusedClientWrites.get("pod-a")).singleElement()
          .isInstanceOf(TermEndedException.class);
      assertThat(cluster.failedReconciliations.get("pod-a")).first()
          .satisfies(failure -> assertThat(causes(failure)).anyMatch(TermEndedException.class::isInstance));
      assertThat(cluster.writes("pod-b", "g-0")).as("pod-b's").isNotEmpty();
      assertThat(writtenBy(cluster, "g-0", "pod-b")).isTrue();
    }
  }

  /**
   * One replica owns every shard: its reconciler's ConfigMap and JOSDK's status patch reach the server, and a change
   * of the gadget reaches the reconciler through the informers of the fenced client, which writes again.
   */
  @Test
  void writesOfAnOwnedShardPassAndTheInformersSeeChanges() {
    try (ShardFenceReplicas cluster = new ShardFenceReplicas(api)) {
      cluster.create("g-1");
      ShardedReplicas.Replica a = cluster.start("pod-a", ShardFenceReplicas.Kind.PLAIN);
      Await.until("pod-a wrote g-1's ConfigMap and status", () -> writtenBy(cluster, "g-1", "pod-a"),
          Duration.ofSeconds(60));

      Gadget changed = cluster.gadget("g-1");
      changed.getSpec().setColor("green");
      api.client().resource(changed).update();
      Await.until("pod-a reconciled the change", () -> {
        ConfigMap marker = cluster.marker("g-1");
        return marker != null && "green".equals(marker.getData().get("color"));
      }, Duration.ofSeconds(60));
      assertThat(a.runner().ownedShards()).hasSize(ShardFenceReplicas.SHARDS);
      assertThat(cluster.refusedClientWrites).isEmpty();
      assertThat(cluster.failedReconciliations).isEmpty();
    }
  }

  /**
   * Two replicas share the shards, and the reconciler has a cleaner, so JOSDK adds a finalizer to each new gadget
   * before it reconciles it, on every replica whose cache has it: only the owner of the gadget's shard sends that
   * finalizer and the status; the other's attempts are refused before they are sent.
   */
  @Test
  void onlyTheShardsOwnerAddsTheFinalizer() {
    try (ShardFenceReplicas cluster = new ShardFenceReplicas(api)) {
      ShardedReplicas.Replica a = cluster.start("pod-a", ShardFenceReplicas.Kind.CLEANER);
      ShardedReplicas.Replica b = cluster.start("pod-b", ShardFenceReplicas.Kind.CLEANER);
      Await.until("the replicas share the shards", () -> a.runner().ownedShards().size() == 8
          && b.runner().ownedShards().size() == 8, Duration.ofSeconds(60));
      Shards shards = Shards.of(ShardFenceReplicas.SHARDS);
      for (int i = 0; i < 6; i++) {
        String name = "f-" + i;
        Gadget gadget = cluster.create(name);
        String owner = a.runner().ownedShards().containsKey(shards.shardOf(gadget)) ? "pod-a" : "pod-b";
        String other = owner.equals("pod-a") ? "pod-b" : "pod-a";
        Await.until("the owner " + owner + " wrote " + name, () -> writtenBy(cluster, name, owner)
            && cluster.gadget(name).getFinalizers().size() == 1, Duration.ofSeconds(60));
        // Of the gadget itself: a ConfigMap create does not say which gadget's it is, and both replicas make some.
        assertThat(cluster.writes(other, name)).as("what " + other + " sent for " + name)
            .noneMatch(write -> write.contains("/gadgets/"));
        assertThat(cluster.writes(owner, name)).as("what " + owner + " sent for " + name)
            .anyMatch(write -> write.contains("/gadgets/" + name + "/status"))
            .anyMatch(write -> write.endsWith("/gadgets/" + name));
      }
      assertThat(cluster.failedReconciliations.values()).flatMap(failures -> failures)
          .allSatisfy(failure -> assertThat(causes(failure)).anyMatch(cause -> String.valueOf(cause.getMessage())
              .contains("which this replica does not own")));
    }
  }

  /**
   * As the first test, with the write made by a managed dependent on one of JOSDK's workflow threads: held in its
   * {@code desired} while its shard moves to pod-b, pod-a's dependent then creates nothing; the server received only
   * pod-b's ConfigMap.
   */
  @Test
  void aManagedDependentStillRunningAfterItsShardMovedWritesNothing() throws InterruptedException {
    try (ShardFenceReplicas cluster = new ShardFenceReplicas(api)) {
      cluster.create("d-0");
      CountDownLatch held = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      AtomicBoolean holding = new AtomicBoolean(true);
      cluster.hook = (identity, gadget) -> {
        if (identity.equals("pod-a") && holding.compareAndSet(true, false)) {
          held.countDown();
          release.await(60, TimeUnit.SECONDS);
        }
      };
      ShardedReplicas.Replica a = cluster.start("pod-a", ShardFenceReplicas.Kind.DEPENDENT);
      assertThat(held.await(60, TimeUnit.SECONDS)).as("pod-a's dependent reconciles d-0").isTrue();
      cluster.start("pod-b", ShardFenceReplicas.Kind.DEPENDENT);

      Thread closing = new Thread(a.runner()::close, "closing-pod-a");
      closing.start();
      Await.until("pod-b's dependent wrote d-0's ConfigMap", () -> {
        ConfigMap marker = api.client().configMaps().inNamespace(api.namespace()).withName("dependent-d-0").get();
        return marker != null && "pod-b".equals(marker.getData().get("reconciledBy"));
      }, Duration.ofSeconds(60));

      int before = cluster.finished.getOrDefault("pod-a", List.of()).size();
      release.countDown();
      Await.until("pod-a's held reconciliation ended", () -> {
        List<String> ends = cluster.finished.getOrDefault("pod-a", List.of());
        return ends.subList(before, ends.size()).contains("d-0");
      }, Duration.ofSeconds(60));
      closing.join(TimeUnit.SECONDS.toMillis(30));

      assertThat(cluster.writes("pod-a", "d-0")).as("pod-a's writes of d-0 the server received").isEmpty();
      assertThat(cluster.writes("pod-b", "d-0")).as("pod-b's").isNotEmpty();
      assertThat(cluster.failedReconciliations.get("pod-a")).as("pod-a's failed reconciliations").isNotEmpty();
      assertThat(api.client().configMaps().inNamespace(api.namespace()).withName("dependent-d-0").get()
          .getData()).containsEntry("reconciledBy", "pod-b");
    }
  }

  private static boolean writtenBy(ShardFenceReplicas cluster, String gadget, String identity) {
    Gadget read = cluster.gadget(gadget);
    ConfigMap marker = cluster.marker(gadget);
    return read != null && read.getStatus() != null && identity.equals(read.getStatus().getReconciledBy())
        && marker != null && identity.equals(marker.getData().get("reconciledBy"));
  }

  private static List<Throwable> causes(Throwable failure) {
    List<Throwable> chain = new java.util.ArrayList<>();
    for (Throwable t = failure; t != null && !chain.contains(t); t = t.getCause()) {
      chain.add(t);
    }
    return chain;
  }
}
