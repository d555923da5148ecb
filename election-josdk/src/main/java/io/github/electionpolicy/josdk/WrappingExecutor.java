package io.github.electionpolicy.josdk;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * An executor that runs each task on JOSDK's executor, wrapped by {@link #wrap(Runnable)}, and leaves the lifecycle
 * (shutdown, termination) to that executor. {@link #shutdownNow()} returns the wrapped tasks that never ran, as the
 * wrapped executor holds them. Thread-safe, as the executor it wraps, when {@link #wrap(Runnable)} is.
 */
abstract class WrappingExecutor extends AbstractExecutorService {

  private final ExecutorService delegate;

  WrappingExecutor(ExecutorService delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** The task as it runs on the wrapped executor; called on the submitting thread. */
  abstract Runnable wrap(Runnable task);

  @Override
  public final void execute(Runnable task) {
    delegate.execute(wrap(Objects.requireNonNull(task, "task")));
  }

  @Override
  public final void shutdown() {
    delegate.shutdown();
  }

  @Override
  public final List<Runnable> shutdownNow() {
    return delegate.shutdownNow();
  }

  @Override
  public final boolean isShutdown() {
    return delegate.isShutdown();
  }

  @Override
  public final boolean isTerminated() {
    return delegate.isTerminated();
  }

  @Override
  public final boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return delegate.awaitTermination(timeout, unit);
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "{" + delegate + "}";
  }
}
