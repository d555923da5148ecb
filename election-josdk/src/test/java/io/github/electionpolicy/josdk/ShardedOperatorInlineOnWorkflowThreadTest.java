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
 * As {@link ShardedOperatorInlineReconciliationTest}, with the reconciliation run inline on a workflow thread: g-x's
 * managed dependent propagates an event for g-y, and the reconciliation pool ({@code CallerRunsPolicy}, its other
 * thread not back in the pool yet) runs g-y's reconciliation on the workflow thread, which carries g-x's
 * reconciliation. Once both ended, the shard must count no reconciliation as running, so that the shard's next stop
 * waits for the next reconciliation of it, whatever ran before.
 */
class ShardedOperatorInlineOnWorkflowThreadTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  static final AtomicReference<SimpleInboundEventSource<Gadget>> NUDGES = new AtomicReference<>();
  static final AtomicReference<Thread> Y_THREAD = new AtomicReference<>();
  static final CountDownLatch WORKER_PARKED = new CountDownLatch(1);
  static final CountDownLatch UNPARK = new CountDownLatch(1);
  static final AtomicBoolean NUDGE_ONCE = new AtomicBoolean(true);
  static final CountDownLatch NUDGED = new CountDownLatch(1);
  static final AtomicInteger X_RECONCILED = new AtomicInteger();
  static final CountDownLatch Z_HELD = new CountDownLatch(1);
  static final CountDownLatch Z_RELEASE = new CountDownLatch(1);
  static final AtomicInteger X_FINISHED = new AtomicInteger();
  static final AtomicInteger Y_FINISHED = new AtomicInteger();

  /** g-x's dependent: the first time, reconciles g-y too, from the workflow thread. */
  public static final class Nudge implements DependentResource<String, Gadget> {
    @Override
    public ReconcileResult<String> reconcile(Gadget primary, Context<Gadget> context) {
      if (primary.getMetadata().getName().equals("g-x") && NUDGE_ONCE.compareAndSet(true, false)) {
        try {
          WORKER_PARKED.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        NUDGES.get().propagateEvent(new ResourceID("g-y", primary.getMetadata().getNamespace()));
        NUDGED.countDown();
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
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) throws InterruptedException {
      if (gadget.getMetadata().getName().equals("g-y")) {
        Y_THREAD.compareAndSet(null, Thread.currentThread());
        return UpdateControl.noUpdate();
      }
      if (X_RECONCILED.incrementAndGet() == 2) {
        // The next reconciliation of g-x after the nudge: held while its shard stops.
        Z_HELD.countDown();
        Z_RELEASE.await(30, TimeUnit.SECONDS);
      }
      return UpdateControl.noUpdate();
    }
  }

  /** How many reconciliations shard 0 counts as running (ShardOwnership's count, read for the failure message). */
  private static int running(ShardedOperator operator) throws ReflectiveOperationException {
    java.lang.reflect.Field ownership = ShardedOperator.class.getDeclaredField("ownership");
    ownership.setAccessible(true);
    java.lang.reflect.Field slots = ShardOwnership.class.getDeclaredField("slots");
    slots.setAccessible(true);
    Object slot = ((Object[]) slots.get(ownership.get(operator)))[0];
    java.lang.reflect.Field running = slot.getClass().getDeclaredField("running");
    running.setAccessible(true);
    synchronized (slot) {
      return running.getInt(slot);
    }
  }

  @Test
  void aReconciliationRunInlineOnAWorkflowThreadDoesNotLeaveTheShardsNextStopWaitingForNothing() throws Exception {
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-x")).create();
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-y")).create();
    AtomicBoolean parkOnce = new AtomicBoolean(true);
    ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
        new ThreadPoolExecutor.CallerRunsPolicy()) {
      @Override
      protected void afterExecute(Runnable task, Throwable thrown) {
        if (Thread.currentThread() == Y_THREAD.get() && parkOnce.compareAndSet(true, false)) {
          WORKER_PARKED.countDown();
          try {
            UNPARK.await(60, TimeUnit.SECONDS);
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
        if (resource != null && resource.getMetadata().getName().equals("g-x")) {
          X_FINISHED.incrementAndGet();
        }
        if (resource != null && resource.getMetadata().getName().equals("g-y")) {
          Y_FINISHED.incrementAndGet();
        }
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
      Thread stopping = new Thread(() -> operator.stop(0), "stopping-shard-0");
      try {
        // The reconciliations of the operator's start, shard 0 not owned yet (skipped), end first.
        long skipped = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((X_FINISHED.get() == 0 || Y_FINISHED.get() == 0 || pool.getActiveCount() > 0)
            && System.nanoTime() < skipped) {
          Thread.onSpinWait();
        }
        int before = X_FINISHED.get();
        operator.start(0, TestTerms.valid("pod-a"));
        assertThat(NUDGED.await(30, TimeUnit.SECONDS)).as("g-x's dependent nudged g-y").isTrue();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (X_FINISHED.get() == before && System.nanoTime() < deadline) {
          Thread.onSpinWait();
        }
        assertThat(X_FINISHED.get()).as("g-x's first reconciliation of the shard ended").isGreaterThan(before);
        UNPARK.countDown();

        // Another reconciliation of g-x, held in its reconciler.
        Gadget changed = api.client().resources(Gadget.class).inNamespace(api.namespace()).withName("g-x").get();
        changed.getSpec().setColor("green");
        api.client().resource(changed).update();
        assertThat(Z_HELD.await(30, TimeUnit.SECONDS)).as("g-x's next reconciliation is in its reconciler").isTrue();
        int runningWhileHeld = running(operator);

        stopping.start();
        while (stopping.isAlive() && stopping.getState() != Thread.State.TIMED_WAITING
            && stopping.getState() != Thread.State.WAITING) {
          Thread.onSpinWait();
        }
        boolean stopReturnedWhileHeld = !stopping.isAlive();
        Z_RELEASE.countDown();
        stopping.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(stopReturnedWhileHeld).as("stop(0) returned while g-x's reconciler still ran (the shard counted %d "
            + "reconciliation(s) running while it was held, not 1)", runningWhileHeld).isFalse();
      } finally {
        UNPARK.countDown();
        Z_RELEASE.countDown();
        stopping.join(TimeUnit.SECONDS.toMillis(30));
        operator.close();
        workflows.shutdownNow();
      }
    }
  }
}
