package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.Readiness;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@link ElectionLifecycle#stop()} from a service's {@code start} while the lifecycle starts the runner unelected (a
 * service that finds at start that it cannot work and stops the election): the class says a stop from one of the
 * runner's own callbacks returns at once, but {@code start()} waits for the services' starts under the lifecycle's
 * lock, and {@code stop()} takes that lock first. Adversarial review h-review.
 */
class StopFromAServiceStartTest {

  @Test
  void aServiceThatStopsTheLifecycleInItsUnelectedStartDoesNotHangTheStart() throws Exception {
    AtomicReference<ElectionLifecycle> lifecycle = new AtomicReference<>();
    CountDownLatch serviceStopped = new CountDownLatch(1);
    CompletableFuture<Void> stopReturned = new CompletableFuture<>();
    LeaderService stopsAtStart = LeaderService.of(term -> {
      lifecycle.get().stop();
      stopReturned.complete(null);
    }, serviceStopped::countDown);
    ElectionDecision unelected = ElectionPolicy.defaults().decide(
        Environment.of(Map.of("LEADER_ELECTION_ENABLED", "false")), Substrate.usingKubernetesApi("kubernetes"));
    LeaseSettings settings = LeaseSettings.builder().leaseName("a").stopTimeout(Duration.ofSeconds(5)).build();
    lifecycle.set(new ElectionLifecycle(unelected, settings, Readiness.CONNECTED, false,
        ElectionLifecycle.DEFAULT_PHASE, new ElectionLifecycle.Inputs() {
          @Override
          public List<LeaderService> services() {
            return List.of(stopsAtStart);
          }

          @Override
          public List<ElectionListener> listeners() {
            return List.of();
          }

          @Override
          public List<ElectionRunnerCustomizer> customizers() {
            return List.of();
          }

          @Override
          public ElectionRunnerStarter starter() {
            return ElectionRunner.Builder::start;
          }

          @Override
          public Optional<KubernetesClient> applicationClient() {
            return Optional.empty();
          }

          @Override
          public Supplier<KubernetesClient> clientFactory() {
            throw new AssertionError("running unelected, no client is made");
          }
        }));

    // On a thread of its own: unfixed, it never returns.
    Thread starter = new Thread(() -> lifecycle.get().start(), "test-start");
    starter.setDaemon(true);
    starter.start();
    starter.join(TimeUnit.SECONDS.toMillis(10));
    assertThat(starter.isAlive()).as("start() still waits for the service, whose stop() waits for start()")
        .isFalse();
    stopReturned.get(10, TimeUnit.SECONDS);
    assertThat(serviceStopped.await(10, TimeUnit.SECONDS)).as("the runner stopped: the service's stop ran").isTrue();
    assertThat(lifecycle.get().isRunning()).as("stopped by the service").isFalse();
  }
}
