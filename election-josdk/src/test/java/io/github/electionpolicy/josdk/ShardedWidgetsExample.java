package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.ShardedRunner;
import io.github.electionpolicy.josdk.sample.Widget;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

/** docs/sharding.md's JOSDK recipe, between the markers; ShardedOperatorDocTest compares and runs it. */
final class ShardedWidgetsExample {

  private ShardedWidgetsExample() {}

  // sharded-josdk:start
  /** Writes a ConfigMap per widget through its shard's write gate, with the shard's term as fencing token. */
  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static final class ShardedWidgetReconciler implements Reconciler<Widget> {
    private final ShardedOperator shards;

    ShardedWidgetReconciler(ShardedOperator shards) {
      this.shards = shards;
    }

    @Override
    public UpdateControl<Widget> reconcile(Widget widget, Context<Widget> context) {
      // Called only while this replica owns the widget's shard under a valid term. Should the term end right now,
      // orElseThrow fails the reconciliation, and the shard's next owner reconciles the widget.
      LeadershipTerm term = shards.termFor(widget).orElseThrow();
      KubernetesClient client = shards.clientFor(widget).orElseThrow(); // refuses writes once the term ended
      client.configMaps().resource(new ConfigMapBuilder()
          .withNewMetadata()
              .withNamespace(widget.getMetadata().getNamespace())
              .withName("widget-" + widget.getMetadata().getName())
          .endMetadata()
          .addToData("reconciledBy", term.holderIdentity())
          .addToData("leaseTransitions", Integer.toString(term.leaseTransitions()))
          .build()).createOr(NonDeletingOperation::update);
      return UpdateControl.noUpdate();
    }
  }

  /** Starts one replica: the operator first (warm on every replica), then the runner that gives it its shards. */
  static AutoCloseable start(KubernetesClient client, ElectionDecision decision, LeaseSettings settings) {
    ShardedOperator widgets = ShardedOperator.builder()
        .client(client)
        .shards(16)
        .reconcilers((operator, shards) -> operator.register(new ShardedWidgetReconciler(shards)))
        .start(); // returns once the informers synced: every widget is in the cache before any shard is owned
    ShardedRunner runner = ShardedRunner.builder()
        .client(client)
        .decision(decision)
        .settings(settings)
        .shards(16)
        .service(widgets)
        .start();
    return () -> {
      runner.close();  // hands every shard over, each once its reconciliations ended
      widgets.close(); // then stops the operator
    };
  }
  // sharded-josdk:end
}
