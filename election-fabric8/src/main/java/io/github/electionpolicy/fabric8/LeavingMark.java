package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * A leaving member's hand-overs, held until its own list and watch shows the leaving mark on its membership Lease
 * ({@link ShardCoordinatorCommand.MarkSeen}): until the others see the mark they plan the member's shards for it, and
 * a shard it released before would stay free until they did; and only a view that shows the mark names successors
 * (docs/sharding.md). Held, each shard's work runs on under its own Lease, which no one else can take meanwhile. The
 * hold ends then, when the membership runner ends, or after a bound, whichever comes first.
 *
 * <p>Not thread-safe: the driver's loop.
 */
final class LeavingMark {

  private final RunnerLoop loop;
  private final IntConsumer handOver;
  private final List<Integer> held = new ArrayList<>();
  private boolean holding;
  private RunnerLoop.Timer bound;

  /** @param handOver closes a shard's runner: what a held hand-over does once the hold ends */
  LeavingMark(RunnerLoop loop, IntConsumer handOver) {
    this.loop = loop;
    this.handOver = handOver;
  }

  /** The mark was set now; the hold ends at the latest after {@code boundNanos}, in a task {@code guard} runs. */
  void set(long boundNanos, Consumer<Runnable> guard) {
    holding = true;
    bound = loop.schedule(boundNanos, () -> guard.accept(this::release));
  }

  /** Holds {@code shard}'s hand-over if the mark is waiting; false if it is to be handed over now. */
  boolean hold(int shard) {
    if (!holding) {
      return false;
    }
    held.add(shard);
    return true;
  }

  /** Ends the hold: the held shards are handed over, in order. */
  void release() {
    holding = false;
    cancel();
    held.forEach(handOver::accept);
    held.clear();
  }

  /** Cancels the bound's timer (the driver stopped). */
  void cancel() {
    if (bound != null) {
      bound.cancel();
      bound = null;
    }
  }
}
