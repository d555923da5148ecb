package io.github.electionpolicy.fabric8;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The production {@link RunnerLoop}: one daemon thread for every runner of the JVM. Its tasks are short (a
 * step of a protocol, a handful of commands), so one thread serves a thousand elections; whatever a task
 * throws is logged (off this thread, as every log line of a runner is: see {@link RunnerLog}) and never ends the
 * thread (the runners catch their own failures first).
 */
final class SharedRunnerLoop implements RunnerLoop {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  static final SharedRunnerLoop INSTANCE = new SharedRunnerLoop();

  private final ScheduledThreadPoolExecutor executor;
  private volatile Thread thread;

  private SharedRunnerLoop() {
    java.util.concurrent.ThreadFactory inheritsNothing = SharedPools.threadFactory("election-loop-");
    executor = new ScheduledThreadPoolExecutor(1, task -> {
      // As the workers: nothing of the first runner's caller (see SharedPools.threadFactory).
      Thread t = inheritsNothing.newThread(task);
      t.setName("election-loop");
      thread = t;
      return t;
    });
    executor.setRemoveOnCancelPolicy(true);
  }

  @Override
  public void execute(Runnable task) {
    executor.execute(guarded(task));
  }

  @Override
  public Timer schedule(long delayNanos, Runnable task) {
    ScheduledFuture<?> future = executor.schedule(guarded(task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    return () -> future.cancel(false);
  }

  @Override
  public boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  private static Runnable guarded(Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (Throwable e) {
        logOffTheLoop(e);
      }
    };
  }

  /** Written on the callback pool: a slow appender must not hold the loop every runner shares. */
  private static void logOffTheLoop(Throwable failure) {
    try {
      SharedPools.userCode().execute(() -> LOG.error("A task of the election loop failed", failure));
    } catch (RuntimeException | Error e) {
      // No thread to write it on: the line is lost, never the loop.
    }
  }

  @Override
  public String toString() {
    return "SharedRunnerLoop{" + executor + "}";
  }
}
