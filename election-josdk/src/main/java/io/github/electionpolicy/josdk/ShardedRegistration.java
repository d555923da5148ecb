package io.github.electionpolicy.josdk;

import io.javaoperatorsdk.operator.Operator;

/**
 * Registers the reconcilers of a {@link ShardedOperator} with its one {@link Operator}, not yet started: what a JOSDK
 * operator's {@code main} does between {@code new Operator(...)} and {@code operator.start()}. Called once, when the
 * sharded operator starts.
 *
 * <pre>{@code
 * ShardedRegistration widgets = (operator, shards) -> operator.register(new WidgetReconciler(shards));
 * }</pre>
 *
 * <p>The sharded operator is passed so that reconcilers can ask it, during a reconciliation, under which term the
 * resource is theirs ({@link ShardedOperator#termFor}) and for the client that fences their writes with that term
 * ({@link ShardedOperator#clientFor}). Register with {@code operator.register(reconciler)} or {@code
 * operator.register(reconciler, config -> ...)}: a {@code ControllerConfiguration} of another JOSDK {@code
 * ConfigurationService} is refused, since its reconciliations would bypass the ownership gate.
 *
 * <p>The operator registers each reconciler wrapped, with the configuration read from your reconciler's class (or the
 * one you pass): an {@link Error} thrown by its {@code reconcile}, {@code cleanup} or {@code updateErrorStatus} is
 * logged and fails the reconciliation, which JOSDK retries, as an exception would (docs/sharding.md). The wrapper is a
 * {@code Cleaner} or a {@code ContextInitializer} exactly when your reconciler is; a {@code Controller}'s {@code
 * getReconciler()} returns the wrapper.
 *
 * <p>Called from one thread; implementations need not be thread-safe.
 */
@FunctionalInterface
public interface ShardedRegistration {

  /**
   * Registers the reconcilers.
   *
   * @param operator the operator, built and not started; register with it, do not start it
   * @param shards the sharded operator the reconcilers run in
   * @throws Exception if the reconcilers cannot be registered: the operator is then not started
   */
  void register(Operator operator, ShardedOperator shards) throws Exception;
}
