package io.github.electionpolicy.fabric8;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a sharded runner's {@link ShardListener}s what it owns, off the loop: {@link #published} runs on the loop
 * after each batch and hands a call to one {@link CallbackLane} only when the owned set changed; a lane the pool
 * refused a thread is handed over again on the loop's timer until one takes it. Loop-confined but for the lane's own
 * thread and that retry.
 */
final class ShardListeners {

  private static final Logger LOG = LoggerFactory.getLogger(ShardedRunner.class);

  private final List<ShardListener> listeners;
  private final CallbackLane lane;
  private final RunnerLoop loop;
  private SortedMap<Integer, LeadershipTerm> told = java.util.Collections.emptySortedMap();
  private boolean stoppedTold;

  ShardListeners(List<ShardListener> listeners, Executor userCode, RunnerLoop loop, String identity, Object owner) {
    this.listeners = List.copyOf(listeners);
    this.loop = Objects.requireNonNull(loop, "loop");
    this.lane = new CallbackLane(userCode, "election-listeners[shards:" + identity + "]", owner);
  }

  /**
   * One call at a time (the loop; running unelected, {@link ShardAssembly.UnelectedListeners}): the snapshot just
   * published; {@code failure} once stopped.
   */
  void published(SortedMap<Integer, LeadershipTerm> owned, boolean stopped, Optional<Throwable> failure) {
    if (listeners.isEmpty()) {
      return;
    }
    if (!sameTerms(told, owned)) {
      told = owned;
      dispatch(listener -> listener.ownedShardsChanged(owned));
    }
    if (stopped && !stoppedTold) {
      stoppedTold = true;
      dispatch(listener -> listener.stopped(failure));
    }
  }

  private static boolean sameTerms(Map<Integer, LeadershipTerm> a, Map<Integer, LeadershipTerm> b) {
    if (!a.keySet().equals(b.keySet())) {
      return false;
    }
    for (Map.Entry<Integer, LeadershipTerm> entry : a.entrySet()) {
      if (entry.getValue() != b.get(entry.getKey())) {
        return false;
      }
    }
    return true;
  }

  private void dispatch(Consumer<ShardListener> call) {
    lane.submitRetrying(() -> {
      for (ShardListener listener : listeners) {
        try {
          call.accept(Objects.requireNonNull(listener));
        } catch (Throwable e) {
          RunnerLog.errorSafely(LOG, "A shard listener threw; the others are still called", e);
        }
      }
    }, loop::schedule);
  }
}
