package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ShardLeaseRunners.LeaseRunner;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * A leaving member's mark on its membership Lease, and its hand-overs held until its own list and watch shows the mark
 * ({@link ShardCoordinatorCommand.MarkSeen}): until the others see the mark they plan the member's shards for it, and
 * a shard it released before would stay free until they did; and only a view that shows the mark names successors
 * (docs/sharding.md). Held, each shard's work runs on under its own Lease, which no one else can take meanwhile. Only
 * work that runs is held: a runner whose work does not run (its take on its way, or its start not begun) is handed
 * over at once, so that its term ends before its work could start, and one held that takes its shard again is handed
 * over as it does ({@link #led}): from the hand-over on, no new work for the shard starts here. The hold ends once the
 * mark is seen, when the membership runner ends, or after a bound, whichever comes first.
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

  /**
   * Marks {@code membership}'s Lease as leaving and has it renewed now, not a retry period on; the hold ends at the
   * latest after {@code boundNanos} (two retry periods), in a task {@code guard} runs. Until then the others plan its
   * shards for it, and each released would stay free.
   */
  void announce(LeaseRunner membership, long boundNanos, Consumer<Runnable> guard) {
    membership.annotate().accept(Map.of(ShardLeases.LEAVING, "true"));
    holding = true; // first: the hold's bound starts before the mark is sent
    bound = loop.schedule(boundNanos, () -> guard.accept(this::release));
    membership.driver().renewSoon();
  }

  /**
   * Holds {@code shard}'s hand-over if the mark is waiting and the shard's work runs ({@code workRuns}: its start began,
   * or it started and did not stop cleanly); false if it is to be handed over now.
   */
  boolean hold(int shard, boolean workRuns) {
    if (!holding || !workRuns) {
      return false;
    }
    held.add(shard);
    return true;
  }

  /**
   * {@code shard}'s runner leads, in the step that publishes it, before its work's start: if its hand-over is held (it
   * took its shard again since, its work having stopped on a loss), the hand-over goes now, which ends the term first.
   */
  void led(int shard) {
    if (held.remove(Integer.valueOf(shard))) {
      handOver.accept(shard);
    }
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
