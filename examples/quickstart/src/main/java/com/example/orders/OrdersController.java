package com.example.orders;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.LeaseSettings;

/**
 * The README's controller: its {@code main} is the README's code block line for line (a test in
 * election-examples fails when they differ). It stops the way a pod does, on SIGTERM: the shutdown hook
 * closes the runner, which stops the reconciler and then releases the Lease.
 */
public final class OrdersController {

  private OrdersController() {
  }

  public static void main(String[] args) throws InterruptedException {
    KubernetesClient client = new KubernetesClientBuilder().build();
    ElectionRunner runner = ElectionRunner.builder()
        .client(client)
        .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.usingKubernetesApi("kubernetes"))
        .settings(LeaseSettings.builder().leaseName("orders-controller").build()) // 15 s / 10 s / 2 s
        .service(new OrdersReconciler(client))   // start(LeadershipTerm) only while leading, stop() on loss
        .start();
    Runtime.getRuntime().addShutdownHook(new Thread(runner::close)); // stop reconcilers, then release the Lease
    runner.awaitStopped();
  }
}
