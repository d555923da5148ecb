package io.github.electionpolicy.benchmarks.sharding;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What every replica of a sharding run reports to: each reconcile's start and end (a key reconciled by two replicas
 * at once is counted, not assumed away), each shard's work starting and stopping (a shard whose work starts while it
 * runs elsewhere is counted; the longest time a shard that had an owner went without one is kept), and the
 * reconciles done. Thread-safe.
 */
final class Ledger {

  private final Map<String, String> inProgress = new ConcurrentHashMap<>();
  private final AtomicLong reconciles = new AtomicLong();
  private final AtomicLong keyOverlaps = new AtomicLong();
  private final int[] owners;
  private final long[] unownedSince;
  private long shardOverlaps;
  private long maxGapNanos;

  Ledger(int shards) {
    this.owners = new int[shards];
    this.unownedSince = new long[shards];
  }

  void begin(String key, String replica) {
    if (inProgress.putIfAbsent(key, replica) != null) {
      keyOverlaps.incrementAndGet();
    }
  }

  void end(String key, String replica) {
    inProgress.remove(key, replica);
    reconciles.incrementAndGet();
  }

  synchronized void shardStarted(int shard) {
    if (owners[shard]++ > 0) {
      shardOverlaps++;
    }
    if (unownedSince[shard] != 0) {
      maxGapNanos = Math.max(maxGapNanos, System.nanoTime() - unownedSince[shard]);
      unownedSince[shard] = 0;
    }
  }

  synchronized void shardStopped(int shard) {
    if (--owners[shard] == 0) {
      unownedSince[shard] = System.nanoTime();
    }
  }

  long reconciles() {
    return reconciles.get();
  }

  long keyOverlaps() {
    return keyOverlaps.get();
  }

  synchronized long shardOverlaps() {
    return shardOverlaps;
  }

  /** The longest a shard went without an owner since the last reset, counting a shard still unowned up to now. */
  synchronized long maxGapNanos() {
    long max = maxGapNanos;
    long now = System.nanoTime();
    for (long since : unownedSince) {
      if (since != 0) {
        max = Math.max(max, now - since);
      }
    }
    return max;
  }

  synchronized void resetGap() {
    maxGapNanos = 0;
  }
}
