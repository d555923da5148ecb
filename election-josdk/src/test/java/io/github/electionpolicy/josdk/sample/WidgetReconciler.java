package io.github.electionpolicy.josdk.sample;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import java.util.Objects;

/**
 * The sample operator's reconciler: for each {@link Widget} it writes a ConfigMap {@code widget-<name>} holding
 * the widget's colour, the replica that reconciled it and the term's fencing token. It writes through the
 * operator's client ({@code context.getClient()}), which {@code OperatorService} gates by the term.
 */
@ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
public class WidgetReconciler implements Reconciler<Widget> {

  /** Sees each reconciliation; tests count them and hold one up. Called on JOSDK's reconciliation threads. */
  public interface Observer {
    /** Called before the ConfigMap is written; may block, as a slow reconciliation would. */
    default void reconciling(LeadershipTerm term, Widget widget) throws Exception {}

    /** Called when the reconciliation ends, with what it threw, or null. */
    default void reconciled(LeadershipTerm term, Widget widget, Throwable failure) {}
  }

  private final LeadershipTerm term;
  private final Observer observer;

  public WidgetReconciler(LeadershipTerm term) {
    this(term, new Observer() { });
  }

  public WidgetReconciler(LeadershipTerm term, Observer observer) {
    this.term = Objects.requireNonNull(term, "term");
    this.observer = Objects.requireNonNull(observer, "observer");
  }

  @Override
  public UpdateControl<Widget> reconcile(Widget widget, Context<Widget> context) throws Exception {
    Throwable failure = null;
    try {
      observer.reconciling(term, widget);
      ConfigMap marker = new ConfigMapBuilder()
          .withNewMetadata()
              .withNamespace(widget.getMetadata().getNamespace())
              .withName("widget-" + widget.getMetadata().getName())
          .endMetadata()
          .addToData("color", String.valueOf(widget.getSpec() == null ? null : widget.getSpec().getColor()))
          .addToData("reconciledBy", term.holderIdentity())
          .addToData("leaseTransitions", Integer.toString(term.leaseTransitions()))  // the fencing token
          .build();
      context.getClient().configMaps().resource(marker).createOr(NonDeletingOperation::update);
      return UpdateControl.noUpdate();
    } catch (Exception | Error e) {
      failure = e;
      throw e;
    } finally {
      observer.reconciled(term, widget, failure);
    }
  }
}
