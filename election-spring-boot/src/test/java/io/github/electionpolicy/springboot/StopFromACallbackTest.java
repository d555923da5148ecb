package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.fabric8.Readiness;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ElectionLifecycle#stop()} called from one of the runner's own callbacks (a listener that closes the context,
 * e.g. on a loss): the runner's {@code close()} cannot wait for itself there and returns at once, and the services stop
 * and the Lease is released afterwards, on the runner's threads. {@code stop()} then closed the client it made at once,
 * under the runner that still needed it to release the Lease: the release failed and the other replicas waited a whole
 * lease duration. Adversarial review h-attack28.
 */
class StopFromACallbackTest {

  private static final String LEASE = "orders-controller";

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  @Test
  void aStopFromAListenerClosesTheClientItMadeOnlyOnceTheRunnerReleasedTheLease() throws Exception {
    ReplicaLink replica = api.replica("replica-1");
    AtomicReference<ElectionLifecycle> lifecycle = new AtomicReference<>();
    CompletableFuture<Void> stopReturned = new CompletableFuture<>();
    ElectionListener closesOnLeading = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.LEADING) {
          lifecycle.get().stop();
          stopReturned.complete(null);
        }
      }
    };
    ElectionDecision contend = ElectionPolicy.defaults().decide(
        Environment.of(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "443")),
        Substrate.usingKubernetesApi("kubernetes"));
    LeaseSettings settings = LeaseSettings.builder()
        .leaseName(LEASE)
        .namespace(api.namespace())
        .identity("replica-1")
        .leaseDuration(Duration.ofSeconds(2))
        .renewDeadline(Duration.ofMillis(1500))
        .retryPeriod(Duration.ofMillis(200))
        .stopTimeout(Duration.ofSeconds(2))
        .lossPolicy(LossPolicy.recontend()) // not the default EXIT: a loss under load must not end the test's JVM
        .build();
    lifecycle.set(new ElectionLifecycle(contend, settings, Readiness.CONNECTED, false, ElectionLifecycle.DEFAULT_PHASE,
        new ElectionLifecycle.Inputs() {
          @Override
          public List<LeaderService> services() {
            return List.of(LeaderService.of(term -> { }, () -> { }));
          }

          @Override
          public List<ElectionListener> listeners() {
            return List.of(closesOnLeading);
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
            // The client the lifecycle makes and owns, as it makes one when the context has none.
            return replica::client;
          }
        }));

    lifecycle.get().start();
    stopReturned.get(15, TimeUnit.SECONDS);
    ElectionRunner runner = lifecycle.get().runner().orElseThrow();
    assertThat(runner.awaitStopped(Duration.ofSeconds(15))).isTrue();

    Await.until("the Lease was released", () -> api.lease(LEASE)
        .map(lease -> lease.getSpec().getHolderIdentity() == null || lease.getSpec().getHolderIdentity().isEmpty())
        .orElse(false), Duration.ofSeconds(5), () -> String.valueOf(api.leaseWrites(LEASE)));
  }
}
