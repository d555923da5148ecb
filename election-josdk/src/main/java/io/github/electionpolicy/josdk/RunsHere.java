package io.github.electionpolicy.josdk;

import java.util.ArrayList;
import java.util.List;

/**
 * The runs of a {@link LaneExecutor}'s tasks that the pool does not count as its own: inside the pool's {@code execute}
 * on the thread that handed the task over (a {@code CallerRunsPolicy}), which may not be one of the pool's. They are
 * counted so that termination waits for them and {@code shutdownNow} interrupts them, as the pool does its own threads,
 * and only while they run: an interrupt sent to a run on a thread that is not the pool's is taken back when it ends.
 *
 * <p>Not thread-safe: guarded by the executor's lock.
 */
final class RunsHere {

  private final List<RunHere> running = new ArrayList<>();

  /**
   * Counts a run on this thread that begins; after a {@code shutdownNow} ({@code stoppedNow}), it begins interrupted,
   * as a pool's thread would.
   *
   * @param poolThread whether the pool runs one of the executor's tasks on this thread (an interrupt then stays)
   * @param stoppedNow whether the executor's {@code shutdownNow} was called
   */
  RunHere begin(boolean poolThread, boolean stoppedNow) {
    RunHere here = new RunHere(poolThread);
    running.add(here);
    if (stoppedNow) {
      here.interrupt();
    }
    return here;
  }

  /**
   * Counts a run on this thread that ended: an interrupt {@code shutdownNow} sent it ({@link #begin} or {@link
   * #interruptAll()}) is taken back, so that it does not outlive the task on a thread that is not the pool's (the
   * submitting thread had not been interrupted before); on a thread the pool runs a task on, it stays, as the pool's
   * own.
   */
  void end(RunHere here) {
    running.remove(here);
    if (here.interrupted && !here.callerInterrupted && !here.poolThread) {
      Thread.interrupted();
    }
  }

  /** Interrupts every run under way, as the pool interrupts its threads. */
  void interruptAll() {
    for (RunHere here : running) {
      here.interrupt();
    }
  }

  /** Whether no run is under way. */
  boolean isEmpty() {
    return running.isEmpty();
  }

  /** A run of a task inside the pool's execute, on the thread that handed it over; guarded by the lock. */
  static final class RunHere {
    private final Thread thread = Thread.currentThread();
    private final boolean callerInterrupted = thread.isInterrupted();
    private final boolean poolThread;
    private boolean interrupted;

    private RunHere(boolean poolThread) {
      this.poolThread = poolThread;
    }

    /** Whether the pool runs one of the executor's tasks on this run's thread. */
    boolean poolThread() {
      return poolThread;
    }

    private void interrupt() {
      interrupted = true;
      thread.interrupt();
    }
  }
}
