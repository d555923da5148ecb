package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.TestTerms;
import io.github.electionpolicy.josdk.sample.Gadget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A {@code withMetrics} of the user's is user code JOSDK runs for each reconciliation, on the reconciliation's path:
 * JOSDK 5.3 calls {@code reconciliationSubmitted} after it marked the resource as being processed and before it hands
 * the task to the pool, and {@code reconciliationStarted} on the pool thread before its dispatch, and catches nothing
 * around either: one that throws (an {@link AssertionError} of a metrics library, or a {@code RuntimeException}) once
 * skips JOSDK's end of the reconciliation, and the resource stays marked as being processed. In the warm mode that is
 * for the process's life: {@code start(shard, term)} promises every resource of the shard in the cache an event and a
 * reconciliation under the new term, which that resource then never gets (review h-attack2). The ownership gate wraps
 * the user's metrics; it now logs what a callback of theirs threw and goes on (docs/sharding.md).
 */
class ShardedOperatorUserMetricsErrorTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** The terms the reconciler of g-0 ran under, in order. */
  static final List<LeadershipTerm> RECONCILED_UNDER = new CopyOnWriteArrayList<>();

  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static final class Recording implements Reconciler<Gadget> {
    private final ShardedOperator shards;

    Recording(ShardedOperator shards) {
      this.shards = shards;
    }

    @Override
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) {
      shards.termFor(gadget).ifPresent(RECONCILED_UNDER::add);
      return UpdateControl.noUpdate();
    }
  }

  /** A user's metrics whose {@code callback} throws an AssertionError once. */
  static final class ThrowsOnce implements Metrics {
    final String callback;
    final AtomicBoolean threw = new AtomicBoolean();

    ThrowsOnce(String callback) {
      this.callback = callback;
    }

    void maybeThrow(String called) {
      if (called.equals(callback) && threw.compareAndSet(false, true)) {
        throw new AssertionError("a bug in the user's metrics' " + called + ", once");
      }
    }

    @Override
    public void reconciliationSubmitted(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
      maybeThrow("reconciliationSubmitted");
    }

    @Override
    public void reconciliationStarted(HasMetadata resource, Map<String, Object> metadata) {
      maybeThrow("reconciliationStarted");
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"reconciliationStarted", "reconciliationSubmitted"})
  void aResourceWhoseReconciliationTheUsersMetricsFailedOnceIsReconciledWhenItsShardMovesHereAgain(String callback)
      throws Exception {
    RECONCILED_UNDER.clear();
    ThrowsOnce metrics = new ThrowsOnce(callback);
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-0")).create();
    KubernetesClient client = api.replica("pod-a").client();
    try (KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build()) {
      ShardedOperator operator = ShardedOperator.builder()
          .client(operatorClient)
          .shards(1)
          .configuration(o -> o.withMetrics(metrics).withUseSSAToPatchPrimaryResource(false))
          .reconcilers((josdk, shards) -> josdk.register(new Recording(shards)))
          .start();
      try {
        // Before any shard is owned, the informer's own events were reconciled (and skipped): the callback throws at
        // the first reconciliation of g-0 it sees, which may be one of those.
        LeadershipTerm first = TestTerms.valid("pod-a");
        try {
          operator.start(0, first);
        } catch (RuntimeException | Error failed) {
          // reconciliationSubmitted on the thread that fires the move's events: a failed start, the shard given up
        }
        Await.until("the user's " + callback + " threw", metrics.threw::get);
        operator.stop(0);

        LeadershipTerm second = TestTerms.valid("pod-a");
        operator.start(0, second);
        Await.until("g-0 reconciled under the second term", () -> RECONCILED_UNDER.contains(second),
            Duration.ofSeconds(15), () -> "reconciled under " + RECONCILED_UNDER);
        assertThat(RECONCILED_UNDER).as("the terms g-0 was reconciled under").contains(second);
        operator.stop(0);
      } finally {
        operator.close();
      }
    }
  }
}
