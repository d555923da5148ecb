package io.github.electionpolicy.josdk;

import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.javaoperatorsdk.operator.Operator;

/**
 * Registers the reconcilers of one term with that term's fresh, not yet started {@link Operator}: what a JOSDK
 * operator's {@code main} does between {@code new Operator(...)} and {@code operator.start()}.
 * {@link OperatorService} calls it once per term, on the runner's services thread, with a new {@code Operator}
 * each time, so create the reconcilers here: no reconciler state then crosses from one term to the next.
 *
 * <pre>{@code
 * ReconcilerRegistration widgets = (operator, term) -> operator.register(new WidgetReconciler(term));
 * // with a JOSDK configuration override:
 * ReconcilerRegistration namespaced = (operator, term) ->
 *     operator.register(new WidgetReconciler(term), config -> config.settingNamespace("shop"));
 * }</pre>
 *
 * <p>A {@code ControllerConfiguration} passed to {@code operator.register(reconciler, configuration)} must come from
 * this operator ({@code operator.getConfigurationService().getConfigurationFor(reconciler)}), not from another
 * {@code ConfigurationService} or an earlier term: JOSDK runs a controller's reconciliations on the executor of its
 * configuration's service, and the start fails otherwise.
 *
 * <p>The operator registers each reconciler wrapped, with the configuration read from your reconciler's class (or the
 * one you pass), as a {@link ShardedOperator}'s does: an {@link Error} thrown by its {@code reconcile}, {@code
 * cleanup}, {@code initContext} or {@code updateErrorStatus} is logged and fails the reconciliation, which JOSDK
 * retries, as an exception would (docs/josdk.md). The wrapper is a {@code Cleaner} or a {@code ContextInitializer}
 * exactly when your reconciler is; a {@code Controller}'s {@code getReconciler()} returns the wrapper.
 *
 * <p>The term is the one the operator runs under: pass it on to reconcilers that fence their writes with
 * {@link LeadershipTerm#leaseTransitions()}. Do not start the operator here: {@link OperatorService} starts it
 * once this returns.
 *
 * <p>Implementations are called from one thread at a time and need not be thread-safe.
 */
@FunctionalInterface
public interface ReconcilerRegistration {

  /**
   * Registers this term's reconcilers.
   *
   * @param operator the term's operator, built and not started; register with it, do not start it
   * @param term the term the operator will run under
   * @throws Exception if the reconcilers cannot be registered (an {@link Error} counts the same): the operator is
   *     not started, and the runner gives up the term as after any failed start
   */
  void register(Operator operator, LeadershipTerm term) throws Exception;
}
