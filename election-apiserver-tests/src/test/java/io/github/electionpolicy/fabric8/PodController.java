package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.DecisionLog;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A controller's {@code main} shaped like the README's, with no client configuration of its own (unlike the
 * README's, it states a substrate without the Kubernetes API, so that being in a pod is the only reason to
 * contend, uses fast lease timings, and closes once it led): run by
 * {@link InPodIT} in a child JVM that sees what a pod sees (the two variables, the service-account files at
 * their usual path, no kubeconfig), it prints what it decided and found, one fact per line.
 */
public final class PodController {

  private PodController() {}

  public static void main(String[] args) throws InterruptedException {
    ElectionDecision decision = ElectionPolicy.defaults()
        .decide(Environment.system(), Substrate.withoutKubernetesApi("direct"));
    DecisionLog.log(decision);
    System.out.println("DECISION " + decision.outcome() + " " + decision.reasons());
    CountDownLatch started = new CountDownLatch(1);
    try (KubernetesClient client = new KubernetesClientBuilder().build()) {
      System.out.println("CLIENT " + client.getMasterUrl() + " namespace=" + client.getNamespace());
      ElectionRunner runner = ElectionRunner.builder()
          .client(client)
          .decision(decision)
          .settings(LeaseSettings.builder().leaseName("orders-controller")
              .leaseDuration(Duration.ofSeconds(2)).renewDeadline(Duration.ofMillis(1500))
              .retryPeriod(Duration.ofMillis(200)).build())
          .service(LeaderService.of(term -> {
            System.out.println("LEADING term=" + term.leaseTransitions());
            started.countDown();
          }, () -> System.out.println("STOPPED SERVICE")))
          .start();
      started.await(30, TimeUnit.SECONDS);
      System.out.println("STATE " + runner.state().kind() + " namespace=" + runner.namespace().orElse("?")
          + " identity=" + runner.identity() + " startupFailure=" + runner.startupFailure().isPresent());
      runner.close();
      System.out.println("CLOSED " + runner.state().kind());
    }
  }
}
