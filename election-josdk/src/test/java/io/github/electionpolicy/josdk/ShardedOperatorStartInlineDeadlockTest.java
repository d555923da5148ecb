package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.fabric8.TestTerms;
import io.github.electionpolicy.josdk.sample.Gadget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.api.reconciler.dependent.ReconcileResult;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.inbound.SimpleInboundEventSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * When the reconciliation pool rejects a task handed over from a thread that is not the pool's (here both its threads
 * are not back in the pool yet; the pool's policy is the default, which throws), the lane executor runs it on that
 * thread. JOSDK hands tasks over from inside its {@code EventProcessor}'s monitor ({@code handleEvent} is
 * synchronized), so the reconciliation then runs holding it: on the runner's thread, inside {@code start(shard)}.
 * A managed dependent of that reconciliation that sends the controller an event from its workflow thread (here through
 * a {@code SimpleInboundEventSource}; JOSDK's own event-filtering update of a dependent does the same when another
 * change came meanwhile) waits for that monitor, while the reconciliation waits for the dependent: {@code start} must
 * still return.
 */
class ShardedOperatorStartInlineDeadlockTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  static final AtomicReference<SimpleInboundEventSource<Gadget>> NUDGES = new AtomicReference<>();
  static final AtomicBoolean PARK = new AtomicBoolean(true);
  static final CountDownLatch UNPARK = new CountDownLatch(1);
  static final AtomicInteger PARKED = new AtomicInteger();
  static final AtomicInteger FINISHED = new AtomicInteger();
  static final AtomicBoolean NUDGE_ONCE = new AtomicBoolean(true);

  /** g-x's dependent: sends the controller an event for g-y, from the workflow thread. */
  public static final class Nudge implements DependentResource<String, Gadget> {
    @Override
    public ReconcileResult<String> reconcile(Gadget primary, Context<Gadget> context) {
      if (primary.getMetadata().getName().equals("g-x") && NUDGE_ONCE.compareAndSet(true, false)) {
        NUDGES.get().propagateEvent(new ResourceID("g-y", primary.getMetadata().getNamespace()));
      }
      return ReconcileResult.noOperation("nudged");
    }

    @Override
    public Class<String> resourceType() {
      return String.class;
    }
  }

  @Workflow(dependents = @Dependent(type = Nudge.class))
  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  public static final class Nudging implements Reconciler<Gadget> {
    @Override
    public List<EventSource<?, Gadget>> prepareEventSources(EventSourceContext<Gadget> context) {
      SimpleInboundEventSource<Gadget> nudges = new SimpleInboundEventSource<>("nudges");
      NUDGES.set(nudges);
      return List.of(nudges);
    }

    @Override
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) {
      return UpdateControl.noUpdate();
    }
  }

  @Test
  void aStartWhoseReconciliationRunsOnTheStartingThreadReturnsThoughItsDependentSendsAnEvent() throws Exception {
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-x")).create();
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-y")).create();
    // Two threads, no queue, the default policy: each thread, once its first task ended, is held (in afterExecute)
    // as a pool thread that has not got back to the pool's queue yet.
    ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 60, TimeUnit.SECONDS, new SynchronousQueue<>()) {
      @Override
      protected void afterExecute(Runnable task, Throwable thrown) {
        if (PARK.get()) {
          PARKED.incrementAndGet();
          try {
            UNPARK.await(120, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    };
    ExecutorService workflows = Executors.newFixedThreadPool(2);
    Metrics finished = new Metrics() {
      @Override
      public void reconciliationFinished(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
        FINISHED.incrementAndGet();
      }
    };
    KubernetesClient client = api.replica("pod-a").client();
    try (KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build()) {
      ShardedOperator operator = ShardedOperator.builder()
          .client(operatorClient)
          .shards(1)
          .configuration(o -> o.withExecutorService(pool).withWorkflowExecutorService(workflows)
              .withMetrics(finished).withUseSSAToPatchPrimaryResource(false))
          .reconcilers((josdk, shards) -> josdk.register(new Nudging()))
          .start();
      Thread starting = new Thread(() -> operator.start(0, TestTerms.valid("pod-a")), "runner-starting-shard-0");
      try {
        // The reconciliations of the operator's start (shard 0 not owned yet, skipped) end, one per pool thread, and
        // both threads are held.
        long skipped = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((FINISHED.get() < 2 || PARKED.get() < 2) && System.nanoTime() < skipped) {
          Thread.onSpinWait();
        }
        assertThat(PARKED.get()).as("pool threads held").isEqualTo(2);

        starting.start();
        starting.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(starting.isAlive()).as("start(0) still runs after 30 s; its thread: %s",
            List.of(starting.getStackTrace()).subList(0, Math.min(12, starting.getStackTrace().length))).isFalse();
      } finally {
        PARK.set(false);
        UNPARK.countDown();
        starting.interrupt(); // breaks the wait of the reconciliation for its dependent, if still stuck
        starting.join(TimeUnit.SECONDS.toMillis(30));
        operator.close();
        workflows.shutdownNow();
      }
    }
  }
}
