package io.github.electionpolicy.fabric8;

import java.util.Optional;
import java.util.SortedMap;

/**
 * Hears what a {@link ShardedRunner} owns: for a controller that wants to be told the current set of its shards
 * rather than started and stopped per shard (a {@link ShardService} does that), for metrics, or for logs. Called off
 * the loop that renews the Leases, on the runner's listener thread, one call at a time and in order; a slow listener
 * delays no renewal and no shard's start or stop. What a listener throws (an {@link Error} included) is logged and
 * the calls go on.
 *
 * <pre>{@code
 * ShardListener gauge = new ShardListener() {
 *   public void ownedShardsChanged(SortedMap<Integer, LeadershipTerm> owned) { ownedGauge.set(owned.size()); }
 * };
 * }</pre>
 */
public interface ShardListener {

  /**
   * Called after each change of the shards this replica owns (a shard taken, handed over or lost, a term
   * renewed as a new term), with the set its runners held at that change. The call comes a moment later, on the
   * listener thread, and is not repeated when a term merely runs out: {@link ShardedRunner#ownedShards()} leaves out
   * a term that is no longer valid even before the runner hears of its end, so code that acts on a shard later asks
   * {@link LeadershipTerm#isValid()} or {@link ShardedRunner#termForShard(int)} then, rather than this set.
   *
   * @param owned the owned shards by shard number, each with its term; immutable
   */
  default void ownedShardsChanged(SortedMap<Integer, LeadershipTerm> owned) {}

  /**
   * Called once, after the replica stopped (closed, or on its own).
   *
   * @param failure why it stopped on its own, as {@link ShardedRunner#failure()}; empty after a close
   */
  default void stopped(Optional<Throwable> failure) {}
}
