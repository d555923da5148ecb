package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.fabric8.TermEndedException;
import io.github.electionpolicy.fabric8.TestTerms;
import io.github.electionpolicy.josdk.sample.Gadget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.inbound.SimpleInboundEventSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * As {@link ShardedOperatorInlineReconciliationTest}, from the reconciler's {@code updateErrorStatus}: JOSDK calls it
 * on the reconciliation's thread when {@code reconcile} threw, after {@code timeControllerExecution} returned, and it is
 * the reconciler's code too (its writes through {@code context.getClient()}, and JOSDK's error status patch after it,
 * are the reconciliation's). Here g-x's reconcile fails, and its {@code updateErrorStatus} propagates an event for
 * g-y while the pool's other thread is not back: g-y's reconciliation runs nested inside g-x's, on g-x's thread. The
 * nested one must not end the outer one: the shard's stop must still wait for g-x's reconciliation, and g-x's writes
 * must still be fenced by the shard's term.
 */
class ShardedOperatorInlineInErrorStatusTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  static final AtomicReference<Thread> Y_THREAD = new AtomicReference<>();
  static final CountDownLatch WORKER_PARKED = new CountDownLatch(1);
  static final CountDownLatch UNPARK = new CountDownLatch(1);
  static final CountDownLatch X_NESTED_DONE = new CountDownLatch(1);
  static final CountDownLatch X_WRITE_NOW = new CountDownLatch(1);
  static final CountDownLatch X_DONE = new CountDownLatch(1);
  static final AtomicBoolean X_TAKEN = new AtomicBoolean();
  static final AtomicBoolean X_RUNNING = new AtomicBoolean();
  static final AtomicReference<Object> X_WRITE = new AtomicReference<>();
  static final AtomicInteger FINISHED = new AtomicInteger();

  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static final class Nudging implements Reconciler<Gadget> {
    final SimpleInboundEventSource<Gadget> nudges = new SimpleInboundEventSource<>("nudges");

    @Override
    public List<EventSource<?, Gadget>> prepareEventSources(EventSourceContext<Gadget> context) {
      return List.of(nudges);
    }

    @Override
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) {
      if (gadget.getMetadata().getName().equals("g-y")) {
        Y_THREAD.compareAndSet(null, Thread.currentThread());
        return UpdateControl.noUpdate();
      }
      if (!X_TAKEN.get()) {
        throw new IllegalStateException("g-x's reconciliation fails, once");
      }
      return UpdateControl.noUpdate();
    }

    @Override
    public ErrorStatusUpdateControl<Gadget> updateErrorStatus(Gadget gadget, Context<Gadget> context, Exception e) {
      if (!X_TAKEN.compareAndSet(false, true)) {
        return ErrorStatusUpdateControl.noStatusUpdate();
      }
      String namespace = gadget.getMetadata().getNamespace();
      X_RUNNING.set(true);
      try {
        WORKER_PARKED.await(30, TimeUnit.SECONDS);
        // Reconcile g-y too: JOSDK hands its reconciliation to the pool from this thread.
        nudges.propagateEvent(new ResourceID("g-y", namespace));
        X_NESTED_DONE.countDown();
        X_WRITE_NOW.await(30, TimeUnit.SECONDS);
        try {
          context.getClient().configMaps().inNamespace(namespace).resource(new ConfigMapBuilder()
              .withNewMetadata().withName("written-by-g-x").endMetadata().addToData("k", "v").build()).create();
          X_WRITE.set("sent");
        } catch (RuntimeException refused) {
          X_WRITE.set(refused);
        }
        return ErrorStatusUpdateControl.noStatusUpdate();
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        return ErrorStatusUpdateControl.noStatusUpdate();
      } finally {
        X_RUNNING.set(false);
        X_DONE.countDown();
      }
    }
  }

  @Test
  void aReconciliationRunInlineInsideAnotherOnesErrorStatusHandlerDoesNotEndTheOuterOnesShardWaitOrFence() throws Exception {
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-x")).create();
    api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-y")).create();
    AtomicBoolean parkOnce = new AtomicBoolean(true);
    // Two threads, no queue, caller runs: the thread that ran g-y's reconciliation is held right after its task
    // (in afterExecute), as a pool thread that has not got back to the pool's queue yet.
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
          .configuration(o -> o.withExecutorService(pool).withMetrics(finished)
              .withUseSSAToPatchPrimaryResource(false))
          .reconcilers((josdk, shards) -> josdk.register(new Nudging()))
          .start();
      Thread stopping = new Thread(() -> operator.stop(0), "stopping-shard-0");
      try {
        // The reconciliations of the operator's start, shard 0 not owned yet (skipped), end first.
        long skipped = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((FINISHED.get() < 2 || pool.getActiveCount() > 0) && System.nanoTime() < skipped) {
          Thread.onSpinWait();
        }
        operator.start(0, TestTerms.valid("pod-a"));
        assertThat(WORKER_PARKED.await(30, TimeUnit.SECONDS)).as("g-y reconciled, its thread held").isTrue();
        assertThat(X_NESTED_DONE.await(30, TimeUnit.SECONDS)).as("g-x's error status handler nudged g-y").isTrue();

        stopping.start();
        // The stop either returns or waits (for g-x's reconciliation, which still runs its error status handler).
        while (stopping.isAlive() && stopping.getState() != Thread.State.TIMED_WAITING
            && stopping.getState() != Thread.State.WAITING) {
          Thread.onSpinWait();
        }
        boolean stopReturnedWhileGxRan = !stopping.isAlive() && X_RUNNING.get();
        X_WRITE_NOW.countDown();
        assertThat(X_DONE.await(30, TimeUnit.SECONDS)).as("g-x's error status handler returned").isTrue();
        stopping.join(TimeUnit.SECONDS.toMillis(30));

        SoftAssertions.assertSoftly(soft -> {
          soft.assertThat(stopReturnedWhileGxRan).as("stop(0) returned while g-x's error status handler still ran").isFalse();
          soft.assertThat(X_WRITE.get()).as("g-x's write through context.getClient(), sent after stop(0) began")
              .isInstanceOf(TermEndedException.class);
          soft.assertThat(api.client().configMaps().inNamespace(api.namespace()).withName("written-by-g-x").get())
              .as("what the server received from g-x's reconciliation after its shard's stop").isNull();
        });
      } finally {
        UNPARK.countDown();
        X_WRITE_NOW.countDown();
        stopping.join(TimeUnit.SECONDS.toMillis(30));
        operator.close();
      }
    }
  }
}
