package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.fabric8.LeadershipTerm;
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
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator-per-term mode ({@link OperatorService}) under the same {@link Error} as the warm mode's rule covers
 * (docs/sharding.md): a reconciler that throws an {@code AssertionError} once. JOSDK 5.3 catches exceptions only, so
 * the reconciliation never ends in JOSDK's books and the resource stays marked as being processed: no later change of
 * it is reconciled for the rest of the term. A term lasts as long as the leader keeps its Lease, the process's life for
 * a stable leader: the same stranding the warm mode's rule was made against (review h-attack2).
 */
class OperatorServiceReconcilerErrorTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** The generations of g-0 the reconciler saw. */
  static final List<Long> RECONCILED = new CopyOnWriteArrayList<>();
  static final AtomicBoolean THROW_ONCE = new AtomicBoolean(true);

  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static final class ThrowsAnErrorOnce implements Reconciler<Gadget> {
    @Override
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) {
      RECONCILED.add(gadget.getMetadata().getGeneration());
      if (THROW_ONCE.compareAndSet(true, false)) {
        throw new AssertionError("a bug in the reconciler, once");
      }
      return UpdateControl.noUpdate();
    }
  }

  @Test
  void aResourceWhoseReconcilerThrewAnErrorIsReconciledAgainInTheSameTerm() throws Exception {
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-0")).create();
    KubernetesClient client = api.replica("pod-a").client();
    try (KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build()) {
      OperatorService service = OperatorService.builder()
          .client(operatorClient)
          .configuration(o -> o.withUseSSAToPatchPrimaryResource(false))
          .reconcilers((operator, term) -> operator.register(new ThrowsAnErrorOnce()))
          .build();
      LeadershipTerm term = TestTerms.valid("pod-a");
      service.start(term);
      try {
        Await.until("g-0's reconciler threw", () -> !THROW_ONCE.get());
        // Without retry, the Error would be enough; with JOSDK's default retry, a change must be reconciled anyway.
        api.client().resources(Gadget.class).inNamespace(api.namespace()).withName("g-0")
            .edit(g -> {
              g.getMetadata().setLabels(java.util.Map.of("changed", "yes"));
              return g;
            });
        Await.until("g-0 reconciled again in the same term", () -> RECONCILED.size() >= 2,
            Duration.ofSeconds(15), () -> "reconciled " + RECONCILED);
        assertThat(RECONCILED).as("g-0's reconciliations").hasSizeGreaterThanOrEqualTo(2);
      } finally {
        service.stop();
      }
    }
  }
}
