package io.github.electionpolicy.josdk;

import io.github.electionpolicy.josdk.sample.Widget;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import java.util.concurrent.atomic.AtomicInteger;

/** A reconciler of widgets that only counts, for tests that drive a JOSDK {@code Operator} without a term. */
@ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
final class CountingReconciler implements Reconciler<Widget> {

  final AtomicInteger reconciliations = new AtomicInteger();

  @Override
  public UpdateControl<Widget> reconcile(Widget widget, Context<Widget> context) {
    reconciliations.incrementAndGet();
    return UpdateControl.noUpdate();
  }
}
