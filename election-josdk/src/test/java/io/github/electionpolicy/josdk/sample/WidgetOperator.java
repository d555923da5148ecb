package io.github.electionpolicy.josdk.sample;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.josdk.OperatorService;

/**
 * The sample operator as a process: docs/josdk.md shows its {@code main} (JosdkDocTest checks it, line for line),
 * and WidgetOperatorProcessTest runs it in a JVM of its own against the embedded API server and stops it with
 * SIGTERM, as Kubernetes would.
 */
public final class WidgetOperator {

  private WidgetOperator() {}

  public static void main(String[] args) throws InterruptedException {
    KubernetesClient client = new KubernetesClientBuilder().build();
    OperatorService widgets = OperatorService.builder()
        .client(client)
        .reconcilers((operator, term) -> operator.register(new WidgetReconciler(term)))
        .build();                                  // fails here if JOSDK's own leader election is configured
    ElectionRunner runner = ElectionRunner.builder()
        .client(client)
        .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.usingKubernetesApi("kubernetes"))
        .settings(LeaseSettings.builder().leaseName("widget-operator").build())
        .service(widgets)                          // a new Operator each term, started only while leading
        .start();
    Runtime.getRuntime().addShutdownHook(new Thread(runner::close)); // stop the operator, then release the Lease
    runner.awaitStopped();
  }
}
