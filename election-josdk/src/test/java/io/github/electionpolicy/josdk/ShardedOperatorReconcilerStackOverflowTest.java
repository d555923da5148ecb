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
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A reconciler whose recursion overflows the stack once, on one resource's content (a {@link StackOverflowError}, a
 * {@link VirtualMachineError}), has unwound by the time JOSDK sees it: the process goes on, nothing ends it (the
 * reconciliation pool's thread ends, the pool starts another), and the runner keeps its Lease. Rethrown as it is
 * (ShardGate did before review h-attack), JOSDK 5.3, which catches exceptions only, left the resource marked as being
 * processed for the warm operator's life: {@code start(shard, term)} promises every resource of the shard in the cache
 * an event and a reconciliation under the new term, which it then never got. It now fails the reconciliation as any
 * {@link Error} does (docs/sharding.md).
 */
class ShardedOperatorReconcilerStackOverflowTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** The terms the reconciler of g-0 ran under, in order. */
  static final List<LeadershipTerm> RECONCILED_UNDER = new CopyOnWriteArrayList<>();
  static final AtomicBoolean THROW_ONCE = new AtomicBoolean(true);
  static final CountDownLatch THREW = new CountDownLatch(1);

  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static final class OverflowsOnce implements Reconciler<Gadget> {
    private final ShardedOperator shards;

    OverflowsOnce(ShardedOperator shards) {
      this.shards = shards;
    }

    @Override
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) {
      RECONCILED_UNDER.add(shards.termFor(gadget).orElseThrow());
      if (THROW_ONCE.compareAndSet(true, false)) {
        THREW.countDown();
        throw new StackOverflowError("a recursion in the reconciler, once");
      }
      return UpdateControl.noUpdate();
    }
  }

  @Test
  void aResourceWhoseReconcilerOverflowedTheStackIsReconciledWhenItsShardMovesHereAgain() throws Exception {
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-0")).create();
    KubernetesClient client = api.replica("pod-a").client();
    try (KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build()) {
      ShardedOperator operator = ShardedOperator.builder()
          .client(operatorClient)
          .shards(1)
          .configuration(o -> o.withUseSSAToPatchPrimaryResource(false))
          .reconcilers((josdk, shards) -> josdk.register(new OverflowsOnce(shards)))
          .start();
      try {
        LeadershipTerm first = TestTerms.valid("pod-a");
        operator.start(0, first);
        assertThat(THREW.await(30, TimeUnit.SECONDS)).as("g-0's reconciler threw under the first term").isTrue();
        operator.stop(0);

        LeadershipTerm second = TestTerms.valid("pod-a");
        operator.start(0, second);
        Await.until("g-0 reconciled under the second term", () -> RECONCILED_UNDER.contains(second),
            java.time.Duration.ofSeconds(15), () -> "reconciled under " + RECONCILED_UNDER);
        assertThat(RECONCILED_UNDER).as("the terms g-0 was reconciled under").contains(first, second);
        operator.stop(0);
      } finally {
        operator.close();
      }
    }
  }
}
