package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Map;
import java.util.Objects;

/**
 * Where a {@link ShardedOperator} decides, for each reconciliation, whether it is this replica's: JOSDK's {@link
 * Metrics}, the user's wrapped. JOSDK 5.3 calls {@code reconciliationStarted} on the reconciliation thread with the
 * resource as the cache has it now, right before it dispatches the reconciliation, and {@code reconciliationFinished}
 * in a {@code finally} once it is done with it (its own writes after the reconciler included); between the two it
 * runs the reconciler (and managed dependents) inside {@code timeControllerExecution}. So:
 * <ul>
 *   <li>{@code reconciliationStarted} enters the resource's shard ({@link ShardOwnership#enter}): the shard counts
 *       the reconciliation as running, and a stop of the shard waits for it, only if the shard is owned here under a
 *       valid term;
 *   <li>{@code timeControllerExecution} runs the reconciler (or cleaner) only if the reconciliation entered an owned
 *       shard, the shard is still owned here under that term (no stop of it began since) and the term is still valid;
 *       otherwise it answers as a reconciler that has nothing to do ({@code
 *       UpdateControl.noUpdate()}, {@code DeleteControl.noFinalizerRemoval()}), which leaves JOSDK's bookkeeping of
 *       the resource as after any successful reconciliation (skipping the task would leave the resource marked as
 *       being processed, and no later event would reconcile it);
 *   <li>{@code reconciliationFinished} exits the shard.
 * </ul>
 * The entry is kept on the reconciliation's thread between the calls, where {@link ShardFence} reads it to check the
 * writes the reconciliation sends. Thread-safe: JOSDK calls it from its
 * reconciliation threads; the user's metrics are called as JOSDK would call them.
 */
final class ShardGate implements Metrics {

  private final Metrics user;
  private final ShardOwnership ownership;
  private final ThreadLocal<ShardOwnership.Entry> entered = new ThreadLocal<>();

  ShardGate(Metrics user, ShardOwnership ownership) {
    this.user = Objects.requireNonNull(user, "user");
    this.ownership = Objects.requireNonNull(ownership, "ownership");
  }

  @Override
  public void reconciliationStarted(HasMetadata resource, Map<String, Object> metadata) {
    ShardOwnership.Entry previous = entered.get();
    if (previous != null) {
      // Never seen: JOSDK pairs the calls; exit what an unpaired start entered rather than keep its shard busy.
      ownership.exit(previous);
    }
    entered.set(ownership.enter(resource));
    user.reconciliationStarted(resource, metadata);
  }

  @Override
  public void reconciliationFinished(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
    try {
      user.reconciliationFinished(resource, retryInfo, metadata);
    } finally {
      ShardOwnership.Entry entry = entered.get();
      entered.remove();
      if (entry != null) {
        ownership.exit(entry);
      }
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T> T timeControllerExecution(ControllerExecution<T> execution) throws Exception {
    ShardOwnership.Entry entry = entered.get();
    // Still held: a stop of the shard that began after the reconciliation entered takes the shard away, and the
    // reconciler must then not run (the stop waits for this reconciliation, not for a reconciler begun after it).
    if (entry != null && entry.owned() && entry.term().isValid() && ownership.holds(entry)) {
      return user.timeControllerExecution(execution);
    }
    // Not this replica's (or its term ended, or its shard was stopped, meanwhile): what a reconciler with nothing to
    // do answers.
    switch (execution.name()) {
      case "reconcile":
        return (T) UpdateControl.noUpdate();
      case "cleanup":
        return (T) DeleteControl.noFinalizerRemoval();
      default:
        throw new IllegalStateException("JOSDK ran a controller execution named '" + execution.name() + "' for "
            + execution.resourceID() + ", which a ShardedOperator does not know how to skip; it runs JOSDK "
            + "5.3's 'reconcile' and 'cleanup' only");
    }
  }

  /** The reconciliation that runs on this thread: what it entered; null outside any reconciliation. */
  ShardOwnership.Entry current() {
    return entered.get();
  }

  /**
   * Runs {@code task} as part of {@code reconciliation} (a managed dependent's task on a workflow thread, submitted
   * by the reconciliation's thread), and then puts back what this thread had.
   */
  void runAs(ShardOwnership.Entry reconciliation, Runnable task) {
    ShardOwnership.Entry own = entered.get();
    if (reconciliation == null) {
      entered.remove();
    } else {
      entered.set(reconciliation);
    }
    try {
      task.run();
    } finally {
      if (own == null) {
        entered.remove();
      } else {
        entered.set(own);
      }
    }
  }

  /** Whether the reconciliation on this thread runs under an owned shard's valid term (for tests). */
  boolean owned() {
    ShardOwnership.Entry entry = entered.get();
    return entry != null && entry.owned() && entry.term().isValid();
  }

  @Override
  public void controllerRegistered(Controller<? extends HasMetadata> controller) {
    user.controllerRegistered(controller);
  }

  @Override
  public void eventReceived(Event event, Map<String, Object> metadata) {
    user.eventReceived(event, metadata);
  }

  @Override
  public void reconciliationSubmitted(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
    user.reconciliationSubmitted(resource, retryInfo, metadata);
  }

  @Override
  public void reconciliationFailed(HasMetadata resource, RetryInfo retryInfo, Exception exception,
      Map<String, Object> metadata) {
    user.reconciliationFailed(resource, retryInfo, exception, metadata);
  }

  @Override
  public void reconciliationSucceeded(HasMetadata resource, Map<String, Object> metadata) {
    user.reconciliationSucceeded(resource, metadata);
  }

  @Override
  public void cleanupDone(ResourceID resourceID, Map<String, Object> metadata) {
    user.cleanupDone(resourceID, metadata);
  }
}
