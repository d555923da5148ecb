package io.github.electionpolicy.josdk;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The tasks one reconciliation ran on JOSDK's workflow executor (its managed dependents, or a workflow it ran itself):
 * how many still run, and the first {@link Error} (or other {@link Throwable} that is not an {@link Exception}) one of
 * them threw. JOSDK 5.3's {@code NodeExecutor} only logs such an {@code Error} and rethrows it into the executor's
 * {@code FutureTask}, which keeps it; and it rethrows it only after its {@code finally} told the workflow the dependent
 * is done, so the reconciliation's thread may go on before the task recorded anything. The reconciliation therefore
 * waits, once its execution returned, for its tasks to end ({@link #awaitEnd}), briefly: JOSDK's own tasks have then
 * only their unwinding left. An {@code Error} read from its task's {@code Future} ({@link #handled}, the reconciler's
 * own task, or one {@code invokeAny} passed over) is left to whoever read it: JOSDK never reads its tasks' futures.
 * Thread-safe.
 */
final class WorkflowTasks {

  /**
   * How long a reconciliation waits for its tasks to end once its execution returned: far longer than a JOSDK task's
   * unwinding, short enough that a task of the user's own that outlives the reconciliation costs it little.
   */
  static final Duration UNWINDING = Duration.ofSeconds(1);

  private int running; // guarded by this
  // Guarded by this: the non-Exception throwables the tasks threw and nobody read from their Future, first first.
  private final List<Throwable> failures = new ArrayList<>();

  /** A task of the reconciliation begins on this thread. */
  synchronized void started() {
    running++;
  }

  /** A task that {@link #started} ended, however. */
  synchronized void ended() {
    if (--running == 0) {
      notifyAll();
    }
  }

  /** Records what a task threw, if it is not an {@link Exception} (JOSDK records those as the dependent's failure). */
  synchronized void threw(Throwable thrown) {
    if (!(thrown instanceof Exception)) {
      failures.add(thrown);
    }
  }

  /**
   * {@code thrown}, which a task {@link #threw}, was read from the task's {@code Future} (an {@link
   * java.util.concurrent.ExecutionException}'s cause): whoever read it handles it, and it no longer fails the
   * reconciliation.
   */
  synchronized void handled(Throwable thrown) {
    for (Iterator<Throwable> kept = failures.iterator(); kept.hasNext(); ) {
      if (kept.next() == thrown) {
        kept.remove();
        return;
      }
    }
  }

  /**
   * Waits up to {@code timeout} for the tasks that began to end; an interrupt ends the wait early (and stays set).
   *
   * @return the first non-Exception throwable a task threw so far that nobody read from its task's Future, or null
   */
  synchronized Throwable awaitEnd(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    boolean interrupted = false;
    while (running > 0 && !interrupted) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        break;
      }
      try {
        TimeUnit.NANOSECONDS.timedWait(this, left);
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return failures.isEmpty() ? null : failures.get(0);
  }

  /** How many tasks still run. */
  synchronized int running() {
    return running;
  }
}
