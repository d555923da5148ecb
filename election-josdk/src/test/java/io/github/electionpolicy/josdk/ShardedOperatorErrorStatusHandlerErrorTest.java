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
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Error rule of docs/sharding.md covers the reconciler as JOSDK calls it: its {@code reconcile}, and the {@code
 * updateErrorStatus} JOSDK calls with what {@code reconcile} threw (a method of the same {@code Reconciler}, user code
 * JOSDK runs on the reconciliation's thread, outside {@code timeControllerExecution}). An {@link Error} thrown there
 * (an {@code AssertionError}, a {@code NoClassDefFoundError}) must not keep its resource from being reconciled when its
 * shard moves here again: the warm mode keeps JOSDK's per-resource state for the whole process, and {@code
 * start(shard, term)} promises every resource of the shard in the cache an event and a reconciliation under the new
 * term.
 */
class ShardedOperatorErrorStatusHandlerErrorTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** The terms the reconciler of g-0 ran under, in order. */
  static final List<LeadershipTerm> RECONCILED_UNDER = new CopyOnWriteArrayList<>();
  static final AtomicBoolean FAIL_ONCE = new AtomicBoolean(true);
  static final AtomicBoolean ERROR_STATUS_THREW = new AtomicBoolean();

  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static final class ErrorStatusThrowsAnError implements Reconciler<Gadget> {
    private final ShardedOperator shards;

    ErrorStatusThrowsAnError(ShardedOperator shards) {
      this.shards = shards;
    }

    @Override
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) {
      RECONCILED_UNDER.add(shards.termFor(gadget).orElseThrow());
      if (FAIL_ONCE.compareAndSet(true, false)) {
        throw new IllegalStateException("a failed reconciliation, once");
      }
      return UpdateControl.noUpdate();
    }

    @Override
    public ErrorStatusUpdateControl<Gadget> updateErrorStatus(Gadget gadget, Context<Gadget> context, Exception e) {
      ERROR_STATUS_THREW.set(true);
      throw new AssertionError("a bug in the reconciler's error status handler, once");
    }
  }

  @Test
  void aResourceWhoseErrorStatusHandlerThrewAnErrorIsReconciledWhenItsShardMovesHereAgain() throws Exception {
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-0")).create();
    KubernetesClient client = api.replica("pod-a").client();
    try (KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build()) {
      ShardedOperator operator = ShardedOperator.builder()
          .client(operatorClient)
          .shards(1)
          .configuration(o -> o.withUseSSAToPatchPrimaryResource(false))
          .reconcilers((josdk, shards) -> josdk.register(new ErrorStatusThrowsAnError(shards)))
          .start();
      try {
        LeadershipTerm first = TestTerms.valid("pod-a");
        operator.start(0, first);
        Await.until("g-0's error status handler threw under the first term", ERROR_STATUS_THREW::get);
        operator.stop(0);

        LeadershipTerm second = TestTerms.valid("pod-a");
        operator.start(0, second);
        Await.until("g-0 reconciled under the second term", () -> RECONCILED_UNDER.contains(second),
            Duration.ofSeconds(15), () -> "reconciled under " + RECONCILED_UNDER);
        assertThat(RECONCILED_UNDER).as("the terms g-0 was reconciled under").contains(first, second);
        operator.stop(0);
      } finally {
        operator.close();
      }
    }
  }
}
