package io.github.electionpolicy.fabric8;

import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.IntConsumer;

/**
 * The work of one shard, run by a {@link ShardedRunner} on the replica that owns the shard: started when this replica
 * takes the shard's Lease (or, running unelected, for every shard at once) and stopped before the shard moves to
 * another replica or the runner closes. It is to one shard what a {@link LeaderService} is to a whole election, with
 * the same rules: both methods are called off the loop that renews the Leases, one call at a time for a given shard
 * (calls for different shards may run at once, on the runner's callback threads), {@link #start} should return
 * promptly and {@link #stop} once the shard's work has stopped, within {@link LeaseSettings#stopTimeout()}.
 *
 * <pre>{@code
 * ShardService orders = new ShardService() {
 *   private final Map<Integer, Worker> workers = new ConcurrentHashMap<>();
 *   public void start(int shard, LeadershipTerm term) { workers.put(shard, Worker.start(shard, term)); }
 *   public void stop(int shard) { workers.remove(shard).stopAndJoin(); }
 * };
 * }</pre>
 *
 * <p><b>What a throw means</b>, as for a {@link LeaderService}: a {@code start} that throws gives the shard up as if
 * its Lease had been lost (it must undo what it began first: its {@code stop} is not called); a {@code stop} that
 * throws or outlives the stop timeout means the shard's work may still run, so its Lease is not released but left to
 * expire, and the replica gives up every shard and leaves (the others take them over once the Leases expire), since
 * it could not safely be given that shard again.
 */
public interface ShardService {

  /**
   * Starts the work of {@code shard} for a term of its Lease.
   *
   * @param shard the shard, from 0 to the shard count minus one
   * @param term the term of the shard's Lease under which the work may run; fence writes with it
   * @throws Exception if the work cannot start (an {@link Error} counts the same)
   */
  void start(int shard, LeadershipTerm term) throws Exception;

  /**
   * Stops the work of {@code shard} and returns once it has stopped.
   *
   * @param shard the shard whose work was started
   * @throws Exception if stopping failed (an {@link Error} counts the same); the shard's Lease is then left to expire
   */
  void stop(int shard) throws Exception;

  /**
   * A shard service from two callbacks.
   *
   * @param onStart called with the shard and its term when the shard's work may start
   * @param onStop called with the shard when its work must stop
   * @return the service
   */
  static ShardService of(BiConsumer<Integer, LeadershipTerm> onStart, IntConsumer onStop) {
    Objects.requireNonNull(onStart, "onStart");
    Objects.requireNonNull(onStop, "onStop");
    return new ShardService() {
      @Override
      public void start(int shard, LeadershipTerm term) {
        onStart.accept(shard, term);
      }

      @Override
      public void stop(int shard) {
        onStop.accept(shard);
      }

      @Override
      public String toString() {
        return "ShardService.of(" + onStart + ", " + onStop + ")";
      }
    };
  }
}
