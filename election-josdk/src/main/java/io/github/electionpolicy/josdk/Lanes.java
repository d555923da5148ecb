package io.github.electionpolicy.josdk;

import java.util.ArrayDeque;
import java.util.List;

/**
 * The tasks that wait in a {@link LaneExecutor}, not yet handed to its pool, in lanes: one lane for each move (a
 * {@link Lane} the executor makes), one for every other task. Every task that waits is in exactly one lane, in the
 * order it was submitted; a lane is ready iff it has tasks, and the ready lanes are taken in turn, round-robin:
 * {@link #poll()} takes the first task of the first ready lane, which goes to the back of the ready ones if it has
 * more, so that no lane is starved.
 *
 * <p>Not thread-safe: guarded by the executor's lock, as its counts are.
 */
final class Lanes {

  private final Lane others = new Lane();
  private final ArrayDeque<Lane> ready = new ArrayDeque<>();

  /** Adds {@code task} last to {@code lane}, or to the lane of every other task if {@code lane} is null. */
  void add(Lane lane, Runnable task) {
    (lane == null ? others : lane).add(task, ready);
  }

  /** Whether no task waits. */
  boolean isEmpty() {
    return ready.isEmpty();
  }

  /** Takes the first task of the first ready lane; call only when a task waits. */
  Polled poll() {
    Lane lane = ready.pollFirst();
    return new Polled(lane, lane.poll(ready));
  }

  /** Puts back a task the pool rejected, first of its lane; the lane goes to the front of the ready ones. */
  void pushFront(Lane lane, Runnable task) {
    lane.pushFront(task, ready);
  }

  /** Takes every task that waits, lane by lane, into {@code into}. */
  void drainTo(List<Runnable> into) {
    for (Lane lane : ready) {
      lane.drainTo(into);
    }
    ready.clear();
  }

  /** How many tasks wait. */
  int waiting() {
    int waiting = 0;
    for (Lane lane : ready) {
      waiting += lane.tasks.size();
    }
    return waiting;
  }

  /** A task {@link #poll()} took, and the lane it waited in. */
  record Polled(Lane lane, Runnable task) { }

  /** Tasks in the order they were submitted; guarded by the executor's lock. */
  static final class Lane {
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();

    private void add(Runnable task, ArrayDeque<Lane> ready) {
      if (tasks.isEmpty()) {
        ready.addLast(this);
      }
      tasks.addLast(task);
    }

    /** Takes the first task; the lane, taken from the front of {@code ready}, goes to its back if it has more. */
    private Runnable poll(ArrayDeque<Lane> ready) {
      Runnable task = tasks.pollFirst();
      if (!tasks.isEmpty()) {
        ready.addLast(this);
      }
      return task;
    }

    /** Puts back a task the pool rejected, first of its lane; the lane goes to the front of {@code ready}. */
    private void pushFront(Runnable task, ArrayDeque<Lane> ready) {
      if (tasks.isEmpty()) {
        ready.addFirst(this);
      }
      tasks.addFirst(task);
    }

    private void drainTo(List<Runnable> into) {
      into.addAll(tasks);
      tasks.clear();
    }
  }
}
