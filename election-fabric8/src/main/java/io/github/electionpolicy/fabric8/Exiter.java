package io.github.electionpolicy.fabric8;

/**
 * Ends the process with a status; the seam through which {@link LossPolicy#exit()} exits, so tests can
 * observe the exit instead of dying.
 *
 * <pre>{@code
 * AtomicInteger exitStatus = new AtomicInteger(-1);
 * LossPolicy policy = LossPolicy.exit(status -> exitStatus.set(status));
 * }</pre>
 *
 * <p>Implementations must be thread-safe and must not block for long: the runner calls them on a callback
 * thread named for it ({@code election-exit[lease:identity]}), never on its loop.
 */
@FunctionalInterface
public interface Exiter {

  /**
   * Ends the process, or whatever stands for it.
   *
   * @param status the exit status, non-zero after a loss of leadership
   */
  void exit(int status);

  /**
   * The exiter that calls {@link System#exit(int)} on a fresh (non-daemon) thread. Exiting on its own
   * thread means no thread of the runner ever blocks inside {@code System.exit}, so a shutdown hook that
   * closes the runner cannot deadlock with the exit; and if the JVM is already shutting down, the call is
   * skipped.
   *
   * @return the process exiter
   */
  static Exiter system() {
    return SystemExiter.INSTANCE;
  }
}
