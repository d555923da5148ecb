package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Measures the warm sharded mode's hand-over: the time from the old owner's {@code close()} of its runner to the new
 * owner's first reconciliation of a moved widget, and to its reconciliation of every moved widget, and, per moved
 * shard, from the shard Lease's release or hand-over (as a watch of the fixture's own saw it) to the new owner's first
 * reconciliation of one of the shard's widgets (issue 17's measure), with every widget in both replicas' caches; for a
 * leave also from the release as its writer stamped it (its {@code renewTime}, which a lagging watch cannot make late:
 * that measure reads long by the release's write, never short). Prints {@code MEASURED} lines. The widget count is {@code
 * -Delection.josdk.measure.widgets=N}: 300 by default, so that the module's suite stays short (creating widgets
 * through the mock server is slow); docs/performance.md ("A warm JOSDK operator's moves") gives the numbers of runs
 * with 2,000 and 10,000. With {@code -Delection.josdk.measure.kubeconfig=PATH} the replicas run on that real
 * kube-apiserver instead (in a namespace of their own, with the Widget CRD created first), e.g. one of {@code
 * tools/kube-apiserver/cluster.sh start DIR}. With
 * {@code -Delection.josdk.measure.threads=N} each replica reconciles on N threads instead of JOSDK's default 50. With
 * {@code -Delection.josdk.measure.warmups=N} the other replica leaves and a new one joins N times before the measured
 * move (each move waited out, every widget reconciled, then a quiet second), so that the move measured is one of a
 * process past its first minute: without, the JVM still compiles the move's code (a third of the test JVM's CPU in
 * the seconds before the move, measured) while it moves.
 */
class ShardedOperatorMoveTimeTest {

  private static final int WIDGETS = Integer.getInteger("election.josdk.measure.widgets", 300);
  /** A real kube-apiserver's kubeconfig ({@code -Delection.josdk.measure.kubeconfig=PATH}); none: the mock server. */
  private static final String KUBECONFIG = System.getProperty("election.josdk.measure.kubeconfig", "");
  private static final int WARMUPS = Integer.getInteger("election.josdk.measure.warmups", 0);
  /** {@code -Delection.josdk.measure.move=join}: measure the hand-overs of a join instead of a leave's releases. */
  private static final boolean JOIN = "join".equals(System.getProperty("election.josdk.measure.move", "leave"));
  /**
   * {@code -Delection.josdk.measure.auditlog=DIR/audit.log} of a server started with {@code AUDIT_LEASE_WRITES=1}: a
   * leave is also measured from each release as the server dated it.
   */
  private static final String AUDIT_LOG = System.getProperty("election.josdk.measure.auditlog", "");

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  @Test
  void aClosedReplicasWidgetsAreReconciledByTheOtherFromItsWarmCache() throws Exception {
    try (ShardedReplicas cluster = KUBECONFIG.isEmpty() ? new ShardedReplicas(api)
        : ShardedReplicas.onRealServer(Path.of(KUBECONFIG))) {
      long creating = System.nanoTime();
      Map<String, String> uids = cluster.createWidgets(WIDGETS);
      long created = System.nanoTime();
      ShardedReplicas.Replica a = cluster.start("pod-a");
      ShardedReplicas.Replica joining = cluster.start("pod-b");
      Await.until("every widget reconciled once both replicas share the shards",
          () -> cluster.firstReconciled.size() == WIDGETS
              && a.runner().ownedShards().size() == 8 && joining.runner().ownedShards().size() == 8,
          Duration.ofMinutes(5), () -> cluster.firstReconciled.size() + " reconciled");
      Shards shards = a.operator().shards();
      ShardedReplicas.Replica b = joining;
      for (int warmup = 1; warmup <= WARMUPS; warmup++) {
        ShardedReplicas.Replica leaving = b;
        Set<Integer> itsShards = new TreeSet<>(leaving.runner().ownedShards().keySet());
        settled(cluster, uids, shards, itsShards, leaving.identity());
        uids.keySet().forEach(name -> cluster.firstReconciled.get(name).remove("pod-a"));
        leaving.runner().close();
        leaving.operator().close();
        Await.until("pod-a owns every shard", () -> a.runner().ownedShards().size() == 16, Duration.ofMinutes(1),
            a.runner()::toString);
        settled(cluster, uids, shards, itsShards, "pod-a");
        b = cluster.start("pod-b-" + warmup);
        ShardedReplicas.Replica joined = b;
        Await.until("8 shards each again", () -> a.runner().ownedShards().size() == 8
            && joined.runner().ownedShards().size() == 8, Duration.ofMinutes(1), () -> a + " " + joined);
      }
      if (JOIN) {
        measureAJoin(cluster, uids, shards, a, b);
        return;
      }
      ShardedReplicas.Replica measured = b;
      Set<Integer> moving = new TreeSet<>(measured.runner().ownedShards().keySet());
      // A move in a steady state: pod-b has reconciled every widget of the shards it took when it joined (pod-a met the
      // first condition alone, before pod-b joined), and no reconciliation began for a second.
      settled(cluster, uids, shards, moving, b.identity());
      if (!b.runner().ownedShards().keySet().equals(moving)) {
        throw new IllegalStateException("pod-b's shards changed while it settled: " + moving + " then "
            + b.runner().ownedShards().keySet());
      }
      Set<String> moved = uids.entrySet().stream().filter(e -> moving.contains(shards.shardOf(e.getValue())))
          .map(Map.Entry::getKey).collect(Collectors.toCollection(TreeSet::new));
      moved.forEach(name -> cluster.firstReconciled.get(name).remove("pod-a"));

      Map<Integer, Long> releasedAt = new java.util.concurrent.ConcurrentHashMap<>();
      Map<Integer, Long> stampedAt = new java.util.concurrent.ConcurrentHashMap<>();
      long release;
      long closed;
      java.time.Instant releaseWall;
      long[] gcBefore;
      long[] gcAfter;
      try (AutoCloseable releases = cluster.recordReleases(releasedAt, stampedAt)) {
        gcBefore = gcMillis();
        releaseWall = java.time.Instant.now();
        release = System.nanoTime();
        b.runner().close();
        closed = System.nanoTime();
        Await.until("pod-a reconciled every moved widget", () -> moved.stream()
            .allMatch(n -> cluster.reconciledBy(n, "pod-a")), Duration.ofMinutes(2),
            () -> moved.stream().filter(n -> !cluster.reconciledBy(n, "pod-a")).count() + " left");
        gcAfter = gcMillis();
        Await.until("every moved shard seen released or handed over", () -> releasedAt.keySet().containsAll(moving),
            Duration.ofSeconds(30), () -> releasedAt.keySet() + " of " + moving);
      }
      // Issue 17's measure: from a shard's release (as the fixture's watch saw it) to the new owner's first
      // reconciliation of one of that shard's widgets, per moved shard.
      Map<Integer, Long> firstOfShard = moved.stream().collect(Collectors.toMap(
          n -> shards.shardOf(uids.get(n)), n -> cluster.firstReconciled.get(n).get("pod-a"), Math::min));
      long[] releaseToFirst = firstOfShard.entrySet().stream()
          .mapToLong(e -> e.getValue() - releasedAt.get(e.getKey())).sorted().toArray();
      // Its two parts, per moved shard: from the release to the runner's start(shard), and from there to the first
      // reconciliation of one of the shard's widgets.
      long[] releaseToStart = firstOfShard.keySet().stream()
          .mapToLong(s -> cluster.shardStarted.get(s).get("pod-a") - releasedAt.get(s)).sorted().toArray();
      long[] startToFirst = firstOfShard.entrySet().stream()
          .mapToLong(e -> e.getValue() - cluster.shardStarted.get(e.getKey()).get("pod-a")).sorted().toArray();
      // The same, from the old owner's stop(shard) returning (its release is sent after it): in this JVM's own
      // clock, so a late event of the fixture's watch cannot make it short (it may, the other measure).
      String oldOwner = b.identity();
      long[] stopToFirst = firstOfShard.entrySet().stream()
          .mapToLong(e -> e.getValue() - cluster.shardStopped.get(e.getKey()).get(oldOwner)).sorted().toArray();
      // From the release as its writer stamped it (its renewTime): cannot read short, reads long by the write.
      long[] stampToFirst = firstOfShard.entrySet().stream()
          .mapToLong(e -> e.getValue() - stampedAt.get(e.getKey())).sorted().toArray();
      long first = moved.stream().mapToLong(n -> cluster.firstReconciled.get(n).get("pod-a")).min().orElseThrow();
      long last = moved.stream().mapToLong(n -> cluster.firstReconciled.get(n).get("pod-a")).max().orElseThrow();
      // From the new owner's start(shard) to its reconciliation of each of the shard's widgets: the JOSDK part.
      long[] fromStart = moved.stream().mapToLong(n -> cluster.firstReconciled.get(n).get("pod-a")
          - cluster.shardStarted.get(shards.shardOf(uids.get(n))).get("pod-a")).sorted().toArray();
      b.operator().close();

      System.out.printf("MEASURED josdk-warm server=%s threads=%s widgets=%d moved=%d shards_moved=%d create_s=%.1f close_ms=%d "
              + "first_moved_reconcile_ms=%d all_moved_reconciled_ms=%d start_to_reconcile_ms_min=%d "
              + "median=%d max=%d release_to_first_reconcile_ms_per_shard_min=%d median=%d max=%d "
              + "release_to_start_ms_per_shard_min=%d median=%d max=%d start_to_first_ms_per_shard_min=%d median=%d "
              + "max=%d stop_to_first_reconcile_ms_per_shard_min=%d median=%d max=%d%n",
          KUBECONFIG.isEmpty() ? "mock" : "real",
          ShardedReplicas.RECONCILIATION_THREADS > 0 ? ShardedReplicas.RECONCILIATION_THREADS : "default", WIDGETS, moved.size(), moving.size(),
          (created - creating) / 1e9, millis(closed - release), millis(first - release), millis(last - release),
          millis(fromStart[0]), millis(fromStart[fromStart.length / 2]), millis(fromStart[fromStart.length - 1]),
          millis(releaseToFirst[0]), millis(releaseToFirst[releaseToFirst.length / 2]),
          millis(releaseToFirst[releaseToFirst.length - 1]), millis(releaseToStart[0]),
          millis(releaseToStart[releaseToStart.length / 2]), millis(releaseToStart[releaseToStart.length - 1]),
          millis(startToFirst[0]), millis(startToFirst[startToFirst.length / 2]),
          millis(startToFirst[startToFirst.length - 1]), millis(stopToFirst[0]),
          millis(stopToFirst[stopToFirst.length / 2]), millis(stopToFirst[stopToFirst.length - 1]));
      System.out.printf("MEASURED josdk-warm stamped_release_to_first_reconcile_ms_per_shard_min=%d median=%d max=%d "
              + "gc_collections_during_move=%d gc_ms_during_move=%d%n",
          millis(stampToFirst[0]), millis(stampToFirst[stampToFirst.length / 2]),
          millis(stampToFirst[stampToFirst.length - 1]), gcAfter[0] - gcBefore[0], gcAfter[1] - gcBefore[1]);
      if (!AUDIT_LOG.isEmpty()) {
        // From each release as the server dated it: when it received the write (reads long by the server's own
        // write, never short) and when its answer was complete (the write had taken effect by then).
        Map<Integer, long[]> audited = cluster.auditedReleases(Path.of(AUDIT_LOG), releaseWall);
        if (!audited.keySet().containsAll(firstOfShard.keySet())) {
          throw new IllegalStateException("the audit log has no release of shards " + firstOfShard.keySet()
              + " after " + releaseWall + ", only of " + audited.keySet());
        }
        long[] receivedToFirst = firstOfShard.entrySet().stream()
            .mapToLong(e -> e.getValue() - audited.get(e.getKey())[0]).sorted().toArray();
        long[] completeToFirst = firstOfShard.entrySet().stream()
            .mapToLong(e -> e.getValue() - audited.get(e.getKey())[1]).sorted().toArray();
        long[] stampToReceived = firstOfShard.keySet().stream()
            .mapToLong(s -> audited.get(s)[0] - stampedAt.get(s)).sorted().toArray();
        System.out.printf("MEASURED josdk-warm audited_release_received_to_first_reconcile_ms_per_shard_min=%d "
                + "median=%d max=%d audited_release_answered_to_first_reconcile_ms_per_shard_min=%d median=%d max=%d "
                + "stamp_to_release_received_ms_min=%d median=%d max=%d%n",
            millis(receivedToFirst[0]), millis(receivedToFirst[receivedToFirst.length / 2]),
            millis(receivedToFirst[receivedToFirst.length - 1]), millis(completeToFirst[0]),
            millis(completeToFirst[completeToFirst.length / 2]), millis(completeToFirst[completeToFirst.length - 1]),
            millis(stampToReceived[0]), millis(stampToReceived[stampToReceived.length / 2]),
            millis(stampToReceived[stampToReceived.length - 1]));
      }
      assertThat(cluster.violations).isEmpty();
    }
  }

  /**
   * The test JVM's collections so far and the time they took (ms), over every collector: with the replicas and their
   * caches in this one JVM, a collection during a move pauses the old owner, the new one and the fixture's watch alike.
   */
  private static long[] gcMillis() {
    long count = 0;
    long millis = 0;
    for (var collector : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
      count += Math.max(0, collector.getCollectionCount());
      millis += Math.max(0, collector.getCollectionTime());
    }
    return new long[] {count, millis};
  }

  /**
   * The move of a join ({@code -Delection.josdk.measure.move=join}): {@code b} leaves, {@code a} owns all 16 shards and
   * settles, then a new replica joins and is handed 8 of them by name (surplus hand-overs). Per moved shard, from the
   * old owner's {@code stop(shard)} returning (its hand-over is sent after it) to the joiner's first reconciliation of
   * one of the shard's widgets, and from the hand-over as the fixture's watch saw it.
   */
  private static void measureAJoin(ShardedReplicas cluster, Map<String, String> uids, Shards shards,
      ShardedReplicas.Replica a, ShardedReplicas.Replica b) throws Exception {
    Set<Integer> bShards = new TreeSet<>(b.runner().ownedShards().keySet());
    settled(cluster, uids, shards, bShards, b.identity());
    uids.keySet().forEach(name -> cluster.firstReconciled.get(name).remove("pod-a"));
    b.runner().close();
    b.operator().close();
    Await.until("pod-a owns every shard", () -> a.runner().ownedShards().size() == 16, Duration.ofMinutes(1),
        a.runner()::toString);
    settled(cluster, uids, shards, bShards, "pod-a");
    Map<Integer, Long> handedAt = new java.util.concurrent.ConcurrentHashMap<>();
    ShardedReplicas.Replica joiner;
    long joining;
    try (AutoCloseable handOvers = cluster.recordReleases(handedAt)) {
      joining = System.nanoTime();
      joiner = cluster.start("pod-joiner");
      ShardedReplicas.Replica joined = joiner;
      Await.until("8 shards each", () -> a.runner().ownedShards().size() == 8
          && joined.runner().ownedShards().size() == 8, Duration.ofMinutes(1), () -> a + " " + joined);
      Set<Integer> moved = new TreeSet<>(joiner.runner().ownedShards().keySet());
      Await.until("the joiner reconciled a widget of every moved shard", () -> moved.stream().allMatch(shard -> uids
          .entrySet().stream().anyMatch(e -> shards.shardOf(e.getValue()) == shard
              && cluster.reconciledBy(e.getKey(), joined.identity()))), Duration.ofMinutes(2), () -> "reconciling");
      Await.until("every moved shard seen handed over", () -> handedAt.keySet().containsAll(moved),
          Duration.ofSeconds(30), () -> handedAt.keySet() + " of " + moved);
      Map<Integer, Long> firstOfShard = new TreeMap<>();
      uids.forEach((name, uid) -> {
        int shard = shards.shardOf(uid);
        Long at = cluster.firstReconciled.get(name).get(joined.identity());
        if (moved.contains(shard) && at != null) {
          firstOfShard.merge(shard, at, Math::min);
        }
      });
      long[] stopToFirst = firstOfShard.entrySet().stream()
          .mapToLong(e -> e.getValue() - cluster.shardStopped.get(e.getKey()).get("pod-a")).sorted().toArray();
      long[] handOverToFirst = firstOfShard.entrySet().stream()
          .mapToLong(e -> e.getValue() - handedAt.get(e.getKey())).sorted().toArray();
      long[] startToFirst = firstOfShard.entrySet().stream()
          .mapToLong(e -> e.getValue() - cluster.shardStarted.get(e.getKey()).get(joined.identity())).sorted()
          .toArray();
      System.out.printf("MEASURED josdk-warm-join server=%s widgets=%d shards_moved=%d "
              + "stop_to_first_reconcile_ms_per_shard_min=%d median=%d max=%d "
              + "hand_over_to_first_reconcile_ms_per_shard_min=%d median=%d max=%d "
              + "start_to_first_ms_per_shard_min=%d median=%d max=%d join_to_last_first_reconcile_ms=%d%n",
          KUBECONFIG.isEmpty() ? "mock" : "real", WIDGETS, moved.size(), millis(stopToFirst[0]),
          millis(stopToFirst[stopToFirst.length / 2]), millis(stopToFirst[stopToFirst.length - 1]),
          millis(handOverToFirst[0]), millis(handOverToFirst[handOverToFirst.length / 2]),
          millis(handOverToFirst[handOverToFirst.length - 1]), millis(startToFirst[0]),
          millis(startToFirst[startToFirst.length / 2]), millis(startToFirst[startToFirst.length - 1]),
          millis(firstOfShard.values().stream().mapToLong(Long::longValue).max().orElseThrow() - joining));
    }
    joiner.operator().close();
    assertThat(cluster.violations).isEmpty();
  }

  /** Waits until {@code owner} reconciled every widget of {@code owned}, then no reconciliation began for a second. */
  private static void settled(ShardedReplicas cluster, Map<String, String> uids, Shards shards, Set<Integer> owned,
      String owner) {
    Await.until(owner + " reconciled the widgets of its shards, then no reconciliation for a second", () -> uids
        .entrySet().stream().filter(e -> owned.contains(shards.shardOf(e.getValue())))
        .allMatch(e -> cluster.reconciledBy(e.getKey(), owner))
        && System.nanoTime() - cluster.lastReconciled.get() > TimeUnit.SECONDS.toNanos(1),
        Duration.ofMinutes(2), () -> "still reconciling");
  }

  private static long millis(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
