package io.github.electionpolicy.josdk;

import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The workflow executor of a {@link ShardedOperator}: JOSDK's (the configured one), whose tasks run as part of the
 * reconciliation that submitted them. JOSDK reconciles a controller's managed dependents on this executor's threads
 * while the reconciliation's thread waits for them; each task takes the submitting thread's reconciliation ({@link
 * ShardGate#current()}) with it, so the writes of a dependent are checked by {@link ShardFence} against the same shard
 * and term as the reconciliation's own, and counts among the reconciliation's tasks ({@link WorkflowTasks}), so that
 * an {@link Error} it throws fails the reconciliation (JOSDK 5.3 only logs it). Thread-safe, as the executor it wraps.
 */
final class ShardContextExecutor extends WrappingExecutor {

  private final ShardGate gate;

  ShardContextExecutor(ExecutorService delegate, ShardGate gate) {
    super(delegate);
    this.gate = Objects.requireNonNull(gate, "gate");
  }

  @Override
  Runnable wrap(Runnable task) {
    return gate.carried(task);
  }

  /**
   * A task {@code submit} makes: its {@link FutureTask} keeps what it throws, so an {@link Error} is recorded among the
   * reconciliation's tasks ({@link WorkflowTasks#threw}) on its way there, and is no longer the reconciliation's once
   * read from the task's {@code Future} ({@link WorkflowTasks#handled}: the submitter's to handle).
   */
  @Override
  protected <T> RunnableFuture<T> newTaskFor(Runnable task, T value) {
    return newTaskFor(() -> {
      task.run();
      return value;
    });
  }

  @Override
  protected <T> RunnableFuture<T> newTaskFor(Callable<T> task) {
    WorkflowTasks tasks = gate.tasks();
    return new Kept<>(() -> {
      try {
        return task.call();
      } catch (Throwable thrown) {
        recordIn(tasks, thrown);
        throw thrown;
      }
    }, tasks);
  }

  /** A task's future whose failure, once read, is the reader's (review h-rev). */
  private static final class Kept<T> extends FutureTask<T> {
    private final WorkflowTasks tasks;

    Kept(Callable<T> task, WorkflowTasks tasks) {
      super(task);
      this.tasks = tasks;
    }

    @Override
    public T get() throws InterruptedException, ExecutionException {
      try {
        return super.get();
      } catch (ExecutionException failed) {
        throw read(failed);
      }
    }

    @Override
    public T get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
      try {
        return super.get(timeout, unit);
      } catch (ExecutionException failed) {
        throw read(failed);
      }
    }

    // Once per task: a second read must not take away another task's failure that is the same object (the JVM may
    // throw one preallocated OutOfMemoryError from several places).
    private final java.util.concurrent.atomic.AtomicBoolean read = new java.util.concurrent.atomic.AtomicBoolean();

    private ExecutionException read(ExecutionException failed) {
      if (tasks != null && read.compareAndSet(false, true)) {
        tasks.handled(failed.getCause());
      }
      return failed;
    }
  }

  private static void recordIn(WorkflowTasks tasks, Throwable thrown) {
    if (tasks != null) {
      tasks.threw(thrown);
    }
  }
}
