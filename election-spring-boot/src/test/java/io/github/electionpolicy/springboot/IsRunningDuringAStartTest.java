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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@link ElectionLifecycle#isRunning()} read while the lifecycle starts the runner: running unelected, {@code start()}
 * waits, under the lifecycle's lock and whatever interrupts come, until the services started, and {@code isRunning()}
 * took that lock. A service whose {@code start} asks whether the lifecycle runs (it is an accessor: the class says the
 * accessors never wait for a start or a stop) therefore waited for the start, which waited for it: the context's
 * refresh hung for ever. Adversarial review h-attack31.
 */
class IsRunningDuringAStartTest {

  @Test
  void aServiceThatReadsIsRunningInItsStartDoesNotHangTheStart() throws Exception {
    AtomicReference<ElectionLifecycle> lifecycle = new AtomicReference<>();
    CompletableFuture<Boolean> runningSeenByTheService = new CompletableFuture<>();
    LeaderService service = LeaderService.of(term -> runningSeenByTheService.complete(lifecycle.get().isRunning()),
        () -> { });
    ElectionDecision unelected = ElectionPolicy.defaults().decide(
        Environment.of(Map.of("LEADER_ELECTION_ENABLED", "false")), Substrate.usingKubernetesApi("kubernetes"));
    assertThat(unelected.contends()).isFalse();
    LeaseSettings settings = LeaseSettings.builder().leaseName("a").stopTimeout(Duration.ofSeconds(5)).build();
    lifecycle.set(new ElectionLifecycle(unelected, settings, Readiness.CONNECTED, false,
        ElectionLifecycle.DEFAULT_PHASE, new ElectionLifecycle.Inputs() {
          @Override
          public List<LeaderService> services() {
            return List.of(service);
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

    CompletableFuture<Void> start = new CompletableFuture<>();
    Thread starter = new Thread(() -> {
      try {
        lifecycle.get().start();
        start.complete(null);
      } catch (Throwable e) {
        start.completeExceptionally(e);
      }
    }, "is-running-start");
    starter.setDaemon(true); // before the fix, it never returns
    starter.start();
    try {
      start.get(10, TimeUnit.SECONDS);
      assertThat(runningSeenByTheService.get(1, TimeUnit.SECONDS)).as("not running until the start returned")
          .isFalse();
      assertThat(lifecycle.get().isRunning()).isTrue();
    } finally {
      if (start.isDone()) {
        lifecycle.get().stop();
      }
    }
  }
}
