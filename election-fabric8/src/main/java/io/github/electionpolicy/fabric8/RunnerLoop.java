package io.github.electionpolicy.fabric8;

/**
 * The seam where a runner's state lives: tasks run one at a time, in the order submitted, and every piece of
 * a runner's mutable state is touched only from them. Production runners share one daemon thread
 * ({@link #shared()}); the deterministic simulation runs them on its own single thread, in simulated time.
 * User code and blocking I/O never run here.
 *
 * <p>Implementations are thread-safe: {@link #execute} and {@link #schedule} may be called from any thread.
 */
interface RunnerLoop {

  /** A scheduled task that has not run yet. */
  interface Timer {
    /** Cancels the task if it has not run yet; a no-op after. */
    void cancel();
  }

  /** Runs {@code task} on the loop, after the tasks submitted before it. */
  void execute(Runnable task);

  /** Runs {@code task} on the loop once {@code delayNanos} passed on the loop's ticker. */
  Timer schedule(long delayNanos, Runnable task);

  /** Whether the caller runs on this loop. */
  boolean inLoop();

  /**
   * Where a runner on this loop writes the log lines logged on it ({@link RunnerLog}): the JVM's one log writer
   * ({@link SharedPools#logWriter()}, on the shared workers), since a slow appender must not hold a loop that
   * other runners' deadlines wait on. The simulation's loop writes them inline: in simulated time an appender
   * costs nothing and no other runner waits.
   */
  default java.util.concurrent.Executor logWriter() {
    return SharedPools.logWriter();
  }

  /** The loop that every runner of this JVM shares: one daemon thread, {@code election-loop}. */
  static RunnerLoop shared() {
    return SharedRunnerLoop.INSTANCE;
  }
}
