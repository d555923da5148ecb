package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Spring waits for the callback of {@link ElectionLifecycle#stop(Runnable)} until its shutdown phase times out (30 s
 * by default) and, when {@code stop} throws, only logs the failure: so the callback runs even when closing the client
 * the lifecycle made fails, and the failure still reaches the caller. Review h-review's suspicion, made a test.
 */
class StopWhenTheClientCloseFailsTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  @Test
  void theCallbackRunsOnceAndTheFailureIsThrownWhenTheOwnedClientsCloseFails() {
    ReplicaLink replica = api.replica("replica-1");
    KubernetesClient failingClose = closeFails(replica.client());
    ElectionDecision contend = ElectionPolicy.defaults().decide(
        Environment.of(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "443")),
        Substrate.usingKubernetesApi("kubernetes"));
    LeaseSettings settings = LeaseSettings.builder()
        .leaseName("orders-controller")
        .namespace(api.namespace())
        .identity("replica-1")
        .leaseDuration(Duration.ofSeconds(2))
        .renewDeadline(Duration.ofMillis(1500))
        .retryPeriod(Duration.ofMillis(200))
        .stopTimeout(Duration.ofSeconds(2))
        .lossPolicy(LossPolicy.recontend()) // not the default EXIT: a loss under load must not end the test's JVM
        .build();
    ElectionLifecycle lifecycle = new ElectionLifecycle(contend, settings, Readiness.CONNECTED, false,
        ElectionLifecycle.DEFAULT_PHASE, new ElectionLifecycle.Inputs() {
          @Override
          public List<LeaderService> services() {
            return List.of(LeaderService.of(term -> { }, () -> { }));
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
            return () -> failingClose;
          }
        });
    lifecycle.start();
    ElectionRunner runner = lifecycle.runner().orElseThrow();
    Await.until("leading", () -> runner.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(15),
        runner::toString);

    AtomicInteger callbacks = new AtomicInteger();
    assertThatThrownBy(() -> lifecycle.stop(callbacks::incrementAndGet)).hasMessageContaining("close failed");
    assertThat(callbacks).as("Spring's callback, run although the stop threw").hasValue(1);
    assertThat(runner.state().kind()).isEqualTo(ElectionState.Kind.STOPPED);
    assertThat(lifecycle.isRunning()).isFalse();

    lifecycle.stop(callbacks::incrementAndGet);
    assertThat(callbacks).as("a stop when stopped runs its callback at once").hasValue(2);
  }

  /** {@code client}, whose {@code close()} closes it and then throws. */
  private static KubernetesClient closeFails(KubernetesClient client) {
    return (KubernetesClient) Proxy.newProxyInstance(KubernetesClient.class.getClassLoader(),
        new Class<?>[] {KubernetesClient.class}, (proxy, method, args) -> {
          Object result;
          try {
            result = method.invoke(client, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          if ("close".equals(method.getName()) && method.getParameterCount() == 0) {
            throw new IllegalStateException("close failed (as a test's client's does)");
          }
          return result;
        });
  }
}
