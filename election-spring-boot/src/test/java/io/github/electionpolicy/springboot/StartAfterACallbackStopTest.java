package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;

/**
 * A {@code start()} soon after a {@code stop()} from one of the runner's own callbacks (a service that stops the
 * election; that stop returns at once, and the runner stops once the callback returned): the lifecycle started the next
 * runner while the first one's services were still stopping, and through {@code ElectionMetrics} (the starter of
 * {@code ElectionMetricsAutoConfiguration}) the start failed, since the binder measures one runner until it stopped.
 * Adversarial review h-review.
 */
class StartAfterACallbackStopTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  @Test
  void aStartAfterAStopFromAServiceWaitsForTheFirstRunnerToStop() throws Exception {
    ReplicaLink replica = api.replica("replica-1");
    AtomicReference<ElectionLifecycle> lifecycle = new AtomicReference<>();
    CountDownLatch lifecycleKnown = new CountDownLatch(1);
    AtomicBoolean stopOnStart = new AtomicBoolean(true);
    CompletableFuture<Void> stoppedFromTheService = new CompletableFuture<>();
    CountDownLatch stopEntered = new CountDownLatch(1);
    CountDownLatch letStop = new CountDownLatch(1);
    // Its start stops the election (returning at once: a stop from a callback), its stop takes a while.
    LeaderService slowToStop = LeaderService.of(term -> {
      if (stopOnStart.getAndSet(false)) {
        try {
          lifecycleKnown.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        lifecycle.get().stop();
        stoppedFromTheService.complete(null);
      }
    }, () -> {
      if (stopEntered.getCount() > 0) {
        stopEntered.countDown();
        try {
          letStop.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    });
    Contexts.election()
        .withConfiguration(AutoConfigurations.of(ElectionMetricsAutoConfiguration.class))
        .withPropertyValues(Contexts.FAST_TIMINGS)
        .withPropertyValues("election.lease-name=orders-controller", "election.namespace=" + api.namespace(),
            "election.identity=replica-1", "election.loss-policy=recontend", "election.stop-timeout=20s")
        .withBean(KubernetesClient.class, replica::client)
        .withBean(LeaderService.class, () -> slowToStop)
        .run(context -> {
          lifecycle.set(context.getBean(ElectionLifecycle.class));
          ElectionRunner first = lifecycle.get().runner().orElseThrow();
          lifecycleKnown.countDown();
          stoppedFromTheService.get(30, TimeUnit.SECONDS);
          assertThat(stopEntered.await(10, TimeUnit.SECONDS)).as("the first runner's service stops").isTrue();

          CompletableFuture<Void> start = CompletableFuture.runAsync(lifecycle.get()::start);
          boolean startedWhileTheFirstStopped = true;
          try {
            start.get(1, TimeUnit.SECONDS);
          } catch (java.util.concurrent.TimeoutException waits) {
            startedWhileTheFirstStopped = false;
          } catch (java.util.concurrent.ExecutionException failed) {
            letStop.countDown();
            throw new AssertionError("the start failed while the first runner stopped", failed.getCause());
          }
          letStop.countDown();
          start.get(30, TimeUnit.SECONDS);
          assertThat(startedWhileTheFirstStopped).as("started a runner while the first one's service still stopped")
              .isFalse();
          assertThat(first.state().kind()).isEqualTo(ElectionState.Kind.STOPPED);
          assertThat(lifecycle.get().runner()).isNotSameAs(first);
          assertThat(lifecycle.get().isRunning()).isTrue();
        });
  }
}
