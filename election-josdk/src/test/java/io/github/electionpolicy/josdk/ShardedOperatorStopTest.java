package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.fabric8.TestTerms;
import io.github.electionpolicy.testsupport.Await;
import io.github.electionpolicy.josdk.sample.Gadget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A shard's stop against a reconciliation of the shard that JOSDK has begun (the gate counted it as running) but whose
 * reconciler it has not called yet: once the stop began, the shard is no longer this replica's, so the reconciler
 * must not be called; the stop waits only for JOSDK to finish the reconciliation as one with nothing to do.
 */
class ShardedOperatorStopTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** Calls of the reconciler, by gadget name. */
  static final List<String> RECONCILED = new CopyOnWriteArrayList<>();

  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static final class Recording implements Reconciler<Gadget> {
    @Override
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) {
      RECONCILED.add(gadget.getMetadata().getName());
      return UpdateControl.noUpdate();
    }
  }

  /**
   * The only shard starts; its reconciliation of g-0 is held in the user's {@code reconciliationStarted}, which the
   * gate calls once it counted the reconciliation as the shard's; {@code stop(0)} begins and waits for it; then the
   * reconciliation goes on: the reconciler is not called.
   */
  @Test
  void aReconciliationThatHasNotReachedTheReconcilerWhenItsShardStopsDoesNotRunIt() throws Exception {
    RECONCILED.clear();
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-0")).create();
    AtomicBoolean armed = new AtomicBoolean();
    CountDownLatch skippedOnce = new CountDownLatch(1);
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Metrics hold = new Metrics() {
      @Override
      public void reconciliationStarted(HasMetadata resource, Map<String, Object> metadata) {
        if (armed.compareAndSet(true, false)) {
          held.countDown();
          try {
            release.await(60, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }

      @Override
      public void reconciliationFinished(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
        skippedOnce.countDown();
      }
    };
    KubernetesClient client = api.replica("pod-a").client();
    try (KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build()) {
      ShardedOperator operator = ShardedOperator.builder()
          .client(operatorClient)
          .shards(1)
          .configuration(o -> o.withMetrics(hold).withUseSSAToPatchPrimaryResource(false))
          .reconcilers((josdk, shards) -> josdk.register(new Recording()))
          .start();
      try {
        // The reconciliation of the start, shard 0 not owned yet: skipped.
        assertThat(skippedOnce.await(60, TimeUnit.SECONDS)).as("the first reconciliation of g-0 ended").isTrue();
        assertThat(RECONCILED).isEmpty();

        armed.set(true);
        operator.start(0, TestTerms.valid("pod-a"));
        assertThat(held.await(60, TimeUnit.SECONDS)).as("shard 0's reconciliation of g-0 began").isTrue();
        Thread stopping = new Thread(() -> operator.stop(0), "stopping-shard-0");
        stopping.start();
        // The stop took the shard away and waits for the held reconciliation.
        while (stopping.getState() != Thread.State.TIMED_WAITING && stopping.isAlive()) {
          Thread.onSpinWait();
        }
        assertThat(stopping.isAlive()).as("stop(0) waits for the reconciliation that began").isTrue();
        release.countDown();
        stopping.join(TimeUnit.SECONDS.toMillis(60));
        assertThat(stopping.isAlive()).isFalse();

        assertThat(RECONCILED).as("reconciler calls after shard 0's stop began").isEmpty();
      } finally {
        release.countDown();
        operator.close();
      }
    }
  }
  /**
   * A start whose firing of the shard's events fails (here the user's {@code eventReceived} throws, once) throws, and
   * the runner then gives the shard up without calling {@code stop}, as for a lost Lease: the start must have undone
   * what it began, so that the next start of the shard, under a new term, takes it again and reconciles its gadget.
   */
  @Test
  void aStartThatThrowsLeavesTheShardFreeForTheNextStart() throws Exception {
    RECONCILED.clear();
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-1")).create();
    AtomicBoolean failNextEvent = new AtomicBoolean();
    CountDownLatch skippedOnce = new CountDownLatch(1);
    Metrics failing = new Metrics() {
      @Override
      public void eventReceived(io.javaoperatorsdk.operator.processing.event.Event event,
          Map<String, Object> metadata) {
        if (failNextEvent.compareAndSet(true, false)) {
          throw new IllegalStateException("the metrics registry failed once");
        }
      }

      @Override
      public void reconciliationFinished(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
        skippedOnce.countDown();
      }
    };
    KubernetesClient client = api.replica("pod-a").client();
    try (KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build()) {
      ShardedOperator operator = ShardedOperator.builder()
          .client(operatorClient)
          .shards(1)
          .configuration(o -> o.withMetrics(failing).withUseSSAToPatchPrimaryResource(false))
          .reconcilers((josdk, shards) -> josdk.register(new Recording()))
          .start();
      try {
        assertThat(skippedOnce.await(60, TimeUnit.SECONDS)).as("the first reconciliation of g-1 ended").isTrue();
        failNextEvent.set(true);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> operator.start(0, TestTerms.valid("pod-a")))
            .hasMessageContaining("the metrics registry failed once");

        operator.start(0, TestTerms.valid("pod-a"));
        Await.until("g-1 reconciled under the second start's term", () -> RECONCILED.contains("g-1"),
            java.time.Duration.ofSeconds(60));
        operator.stop(0);
      } finally {
        operator.close();
      }
    }
  }
}
