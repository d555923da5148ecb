package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.josdk.sample.Widget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.source.controller.ControllerEventSource;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The warm sharded mode over the real fabric8 client and JOSDK against the embedded API server: two replicas of a
 * {@link ShardedOperator}, each widget reconciled only by its shard's owner under that shard's term and never by two
 * replicas at once; when one replica closes, the other reconciles the moved widgets at once, from its cache.
 */
class ShardedOperatorTest {

  private static final int WIDGETS = 96;

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  @Test
  void theMockKeepsTheUidsItIsGivenSoWidgetsSpreadOverTheShards() {
    try (ShardedReplicas cluster = new ShardedReplicas(api)) {
      Map<String, String> uids = cluster.createWidgets(WIDGETS);
      String created = uids.get("w-7");
      Widget stored = api.client().resources(Widget.class).inNamespace(api.namespace()).withName("w-7").get();
      assertThat(stored.getMetadata().getUid()).isEqualTo(created);
      assertThat(new HashSet<>(uids.values())).hasSize(WIDGETS);
      Shards shards = Shards.of(ShardedReplicas.SHARDS);
      assertThat(uids.values().stream().map(shards::shardOf).collect(Collectors.toSet())).hasSizeGreaterThan(12);
    }
  }

  @Test
  void eachWidgetIsReconciledOnlyByItsShardsOwnerAndAMovedShardAtOnceFromTheCache() {
    try (ShardedReplicas cluster = new ShardedReplicas(api)) {
      Map<String, String> uids = cluster.createWidgets(WIDGETS);
      ShardedReplicas.Replica a = cluster.start("pod-a");
      ShardedReplicas.Replica b = cluster.start("pod-b");
      Await.until("every widget reconciled once both replicas share the shards",
          () -> cluster.firstReconciled.size() == WIDGETS
              && a.runner().ownedShards().size() == 8 && b.runner().ownedShards().size() == 8,
          Duration.ofSeconds(60), () -> new TreeMap<>(cluster.firstReconciled));
      Shards shards = a.operator().shards();
      Set<Integer> moving = new TreeSet<>(b.runner().ownedShards().keySet());
      Set<String> moved = uids.entrySet().stream().filter(e -> moving.contains(shards.shardOf(e.getValue())))
          .map(Map.Entry::getKey).collect(Collectors.toCollection(TreeSet::new));
      assertThat(moved).isNotEmpty();
      // By pod-a before pod-b had the shard, while both started: not the move.
      moved.forEach(name -> cluster.firstReconciled.get(name).remove("pod-a"));

      b.runner().close();
      Await.until("pod-a owns every shard and reconciled the moved widgets, with no change to them",
          () -> a.runner().ownedShards().size() == 16 && moved.stream().allMatch(n -> cluster.reconciledBy(n, "pod-a")),
          Duration.ofSeconds(30), () -> new TreeMap<>(cluster.firstReconciled));
      b.operator().close();

      assertThat(cluster.violations).isEmpty();
    }
  }

  /**
   * A moved shard's resources are found through an index by shard on each controller's informer (not by reading and
   * hashing every cached resource): it holds each cached widget under its own shard only, and follows the informer's
   * changes.
   */
  @Test
  void theIndexAMoveReadsHoldsEachCachedWidgetUnderItsOwnShardOnly() {
    try (ShardedReplicas cluster = new ShardedReplicas(api)) {
      Map<String, String> uids = new TreeMap<>(cluster.createWidgets(WIDGETS));
      ShardedReplicas.Replica a = cluster.start("pod-a");
      Shards shards = a.operator().shards();
      Widget late = Widget.named(api.namespace(), "w-late", "blue");
      late = api.client().resources(Widget.class).inNamespace(api.namespace()).resource(late).create();
      uids.put("w-late", late.getMetadata().getUid());
      api.client().resources(Widget.class).inNamespace(api.namespace()).withName("w-3").delete();
      uids.remove("w-3");
      ControllerEventSource<Widget> primaries = primaries(a.operator());

      Await.until("the index holds every widget under its shard", () -> {
        for (int shard = 0; shard < shards.count(); shard++) {
          int s = shard;
          Set<String> indexed = primaries.byIndex(ShardMoves.NAME, Integer.toString(shard)).stream()
              .map(w -> w.getMetadata().getName()).collect(Collectors.toSet());
          Set<String> expected = uids.entrySet().stream().filter(e -> shards.shardOf(e.getValue()) == s)
              .map(Map.Entry::getKey).collect(Collectors.toSet());
          if (!indexed.equals(expected)) {
            return false;
          }
        }
        return true;
      }, () -> "index " + new TreeMap<>(primaries.list().collect(Collectors.groupingBy(
          w -> shards.shardOf(w.getMetadata().getUid()), Collectors.counting()))));
      a.runner().close();
      a.operator().close();
    }
  }

  @SuppressWarnings("unchecked")
  private static ControllerEventSource<Widget> primaries(ShardedOperator operator) {
    Controller<Widget> controller = (Controller<Widget>) operator.operator().getRegisteredControllers().iterator().next();
    return controller.getEventSourceManager().getControllerEventSource();
  }

  /**
   * A reconciliation pool that drops a task without a word would stop the operator for good (a dropped task never
   * ends, and the lanes hand the pool no more tasks than it has threads): the start refuses it, naming the setting,
   * before anything starts.
   */
  @Test
  void aReconciliationPoolThatDropsTasksWithoutAWordFailsTheStart() {
    for (java.util.concurrent.RejectedExecutionHandler policy : java.util.List.of(
        new ThreadPoolExecutor.DiscardPolicy(), new ThreadPoolExecutor.DiscardOldestPolicy())) {
      ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 2, 1, TimeUnit.SECONDS, new SynchronousQueue<>(), policy);
      try {
        assertThatThrownBy(() -> ShardedOperator.builder()
            .client(api.client())
            .shards(ShardedReplicas.SHARDS)
            .configuration(config -> config.withExecutorService(pool))
            .reconcilers((operator, shards) -> {
              throw new AssertionError("registered although the start was refused");
            })
            .start())
            .isInstanceOfSatisfying(InvalidElectionSettingException.class, e -> {
              assertThat(e.setting()).isEqualTo(JosdkConfiguration.EXECUTOR_SETTING);
              assertThat(e.value()).endsWith(policy.getClass().getSimpleName());
              assertThat(e.getMessage()).contains("CallerRunsPolicy", "AbortPolicy");
            });
      } finally {
        pool.shutdownNow();
      }
    }
  }
  /**
   * Review h-attack19's note: a pool whose thread count cannot be read (here {@code newSingleThreadExecutor()}, a
   * wrapper) is handed up to {@code concurrentReconciliationThreads()} tasks at a time, which quietly defeats the lanes
   * when it has fewer threads: the start says so, naming the pool, the count and the settings that fix it. A
   * {@code ThreadPoolExecutor} gets no such line.
   */
  @Test
  void aReconciliationPoolWhoseSizeCannotBeReadIsNamedInAWarningAtTheStart() {
    java.util.concurrent.ExecutorService single = java.util.concurrent.Executors.newSingleThreadExecutor();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 1, TimeUnit.SECONDS,
        new java.util.concurrent.LinkedBlockingQueue<>());
    try (io.github.electionpolicy.testsupport.LogCapture log = new io.github.electionpolicy.testsupport.LogCapture()) {
      start(single).close();
      assertThat(log.text()).contains("is neither a ThreadPoolExecutor nor a ForkJoinPool",
          single.getClass().getName(), "up to 50 reconciliations at a time", JosdkConfiguration.EXECUTOR_SETTING,
          "withConcurrentReconciliationThreads");
    } finally {
      single.shutdownNow();
    }
    try (io.github.electionpolicy.testsupport.LogCapture log = new io.github.electionpolicy.testsupport.LogCapture()) {
      start(pool).close();
      assertThat(log.text()).doesNotContain("is neither a ThreadPoolExecutor nor a ForkJoinPool");
    } finally {
      pool.shutdownNow();
    }
  }

  private ShardedOperator start(java.util.concurrent.ExecutorService reconciliations) {
    return ShardedOperator.builder()
        .client(api.client())
        .shards(ShardedReplicas.SHARDS)
        .configuration(config -> config.withExecutorService(reconciliations))
        .reconcilers((operator, shards) -> operator.register(new CountingReconciler()))
        .start();
  }
}
