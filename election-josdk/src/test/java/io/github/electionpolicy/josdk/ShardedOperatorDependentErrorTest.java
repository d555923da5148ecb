package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.fabric8.TestTerms;
import io.github.electionpolicy.josdk.sample.Gadget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A managed dependent is user code JOSDK runs for a reconciliation too, on its workflow threads. JOSDK 5.3's
 * NodeExecutor records an exception of a dependent as the workflow's error (the reconciliation fails and is retried),
 * but an {@link Error} it only logs ("java.lang.Error during execution") and rethrows on the workflow thread, where the
 * executor's {@code FutureTask} keeps it, after its {@code finally} told the workflow the dependent is done: the
 * workflow returned with no error, the reconciler's {@code reconcile} ran and the reconciliation succeeded, not retried, and the
 * dependent stayed missing until the resource's next event (review h-attack2; red before the fix: no ConfigMap
 * dependent-g-0 within 15 s, the reconciler ran once and succeeded). The sharded operator counts the tasks each
 * reconciliation runs on the workflow executor and fails the reconciliation with such an {@code Error}
 * ({@link WorkflowTasks}), so JOSDK retries it and the retry makes the dependent.
 */
class ShardedOperatorDependentErrorTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  static final AtomicBoolean THROW_ONCE = new AtomicBoolean(true);
  static final List<String> RECONCILED = new CopyOnWriteArrayList<>();

  @Workflow(dependents = @Dependent(type = FailsOnce.class))
  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static final class WithADependent implements Reconciler<Gadget> {
    @Override
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) {
      RECONCILED.add(gadget.getMetadata().getName());
      return UpdateControl.noUpdate();
    }
  }

  /** A ConfigMap {@code dependent-<name>} whose {@code desired} throws an AssertionError once. */
  public static final class FailsOnce extends CRUDKubernetesDependentResource<ConfigMap, Gadget> {
    public FailsOnce() {
      super(ConfigMap.class);
    }

    @Override
    protected ConfigMap desired(Gadget gadget, Context<Gadget> context) {
      if (THROW_ONCE.compareAndSet(true, false)) {
        throw new AssertionError("a bug in the dependent, once");
      }
      return new ConfigMapBuilder()
          .withNewMetadata()
              .withNamespace(gadget.getMetadata().getNamespace())
              .withName("dependent-" + gadget.getMetadata().getName())
          .endMetadata()
          .addToData("reconciled", "yes")
          .build();
    }
  }

  @Test
  void aDependentThatThrewAnErrorOnceIsReconciledByTheRetry() throws Exception {
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-0")).create();
    java.util.concurrent.CountDownLatch settled = new java.util.concurrent.CountDownLatch(1);
    io.javaoperatorsdk.operator.api.monitoring.Metrics finished =
        new io.javaoperatorsdk.operator.api.monitoring.Metrics() {
          @Override
          public void reconciliationFinished(io.fabric8.kubernetes.api.model.HasMetadata resource,
              io.javaoperatorsdk.operator.api.reconciler.RetryInfo retryInfo, java.util.Map<String, Object> metadata) {
            settled.countDown();
          }
        };
    KubernetesClient client = api.replica("pod-a").client();
    try (KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build()) {
      ShardedOperator operator = ShardedOperator.builder()
          .client(operatorClient)
          .shards(1)
          .configuration(o -> o.withMetrics(finished).withUseSSAToPatchPrimaryResource(false)
              .withSSABasedCreateUpdateMatchForDependentResources(false))
          .reconcilers((josdk, shards) -> josdk.register(new WithADependent()))
          .start();
      try {
        // The informer's first event of g-0 was reconciled (skipped, no shard owned): only the move's event is left.
        org.assertj.core.api.Assertions.assertThat(settled.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        operator.start(0, TestTerms.valid("pod-a"));
        Await.until("the dependent threw", () -> !THROW_ONCE.get());
        Await.until("dependent-g-0 made by a retry of g-0's reconciliation", () -> api.client().configMaps()
                .inNamespace(api.namespace()).withName("dependent-g-0").get() != null,
            Duration.ofSeconds(15), () -> "the reconciler ran for " + RECONCILED);
        operator.stop(0);
      } finally {
        operator.close();
      }
    }
  }
}
