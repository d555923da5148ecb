package io.github.electionpolicy.josdk;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The workflow executor of a {@link ShardedOperator}: JOSDK's (the configured one), whose tasks run as part of the
 * reconciliation that submitted them. JOSDK reconciles a controller's managed dependents on this executor's threads
 * while the reconciliation's thread waits for them; each task takes the submitting thread's reconciliation ({@link
 * ShardGate#current()}) with it, so the writes of a dependent are checked by {@link ShardFence} against the same shard
 * and term as the reconciliation's own. Thread-safe, as the executor it wraps.
 */
final class ShardContextExecutor extends AbstractExecutorService {

  private final ExecutorService delegate;
  private final ShardGate gate;

  ShardContextExecutor(ExecutorService delegate, ShardGate gate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.gate = Objects.requireNonNull(gate, "gate");
  }

  @Override
  public void execute(Runnable task) {
    Objects.requireNonNull(task, "task");
    ShardOwnership.Entry submitter = gate.current();
    delegate.execute(() -> gate.runAs(submitter, task));
  }

  @Override
  public void shutdown() {
    delegate.shutdown();
  }

  @Override
  public List<Runnable> shutdownNow() {
    return delegate.shutdownNow();
  }

  @Override
  public boolean isShutdown() {
    return delegate.isShutdown();
  }

  @Override
  public boolean isTerminated() {
    return delegate.isTerminated();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return delegate.awaitTermination(timeout, unit);
  }

  @Override
  public String toString() {
    return "ShardContextExecutor{" + delegate + "}";
  }
}
