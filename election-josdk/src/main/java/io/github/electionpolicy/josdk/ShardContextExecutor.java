package io.github.electionpolicy.josdk;

import java.util.Objects;
import java.util.concurrent.ExecutorService;

/**
 * The workflow executor of a {@link ShardedOperator}: JOSDK's (the configured one), whose tasks run as part of the
 * reconciliation that submitted them. JOSDK reconciles a controller's managed dependents on this executor's threads
 * while the reconciliation's thread waits for them; each task takes the submitting thread's reconciliation ({@link
 * ShardGate#current()}) with it, so the writes of a dependent are checked by {@link ShardFence} against the same shard
 * and term as the reconciliation's own. Thread-safe, as the executor it wraps.
 */
final class ShardContextExecutor extends WrappingExecutor {

  private final ShardGate gate;

  ShardContextExecutor(ExecutorService delegate, ShardGate gate) {
    super(delegate);
    this.gate = Objects.requireNonNull(gate, "gate");
  }

  @Override
  Runnable wrap(Runnable task) {
    ShardOwnership.Entry submitter = gate.current();
    return () -> gate.runAs(submitter, task);
  }
}
