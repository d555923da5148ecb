package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.josdk.sample.Widget;
import io.github.electionpolicy.josdk.sample.WidgetReconciler;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Two replicas of the widget operator on the embedded Lease API: one leads and reconciles a custom resource. */
class WidgetOperatorTestkitTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** The operator's main, with the fixture's client for this replica and timings for a test. */
  private ElectionRunner startReplica(String identity) {
    KubernetesClient client = api.replica(identity).client();
    OperatorService widgets = OperatorService.builder()
        .client(client)
        .reconcilers((operator, term) -> operator.register(new WidgetReconciler(term)))
        .build();
    return ElectionRunner.builder()
        .client(client)
        .decide(ElectionPolicy.defaults(), Environment.of(Map.of()), Substrate.usingKubernetesApi("kubernetes"))
        .settings(LeaseSettings.builder()
            .leaseName("widget-operator")
            .namespace(api.namespace())
            .identity(identity)
            .leaseDuration(Duration.ofSeconds(3))
            .renewDeadline(Duration.ofSeconds(2))
            .retryPeriod(Duration.ofMillis(250))
            .lossPolicy(LossPolicy.recontend()) // not the default EXIT: a loss under load must not end the test's JVM
            .build())
        .service(widgets)
        .start();
  }

  @Test
  void theLeadersOperatorReconcilesAWidget() {
    try (ElectionRunner first = startReplica("replica-1"); ElectionRunner second = startReplica("replica-2")) {
      // No CRD needed: the embedded server stores custom resources as it stores any other kind.
      api.client().resources(Widget.class).inNamespace(api.namespace())
          .resource(Widget.named(api.namespace(), "blue-one", "blue")).create();

      // The widget was reconciled: fabric8 watches for the marker and returns it once it exists (no polling).
      ConfigMap marker = marker("blue-one").waitUntilCondition(Objects::nonNull, 30, TimeUnit.SECONDS);
      String leader = api.lease("widget-operator").orElseThrow().getSpec().getHolderIdentity();
      assertThat(marker.getData())
          .containsEntry("reconciledBy", leader)  // by the leader's operator; the follower runs none
          .containsEntry("color", "blue");
    }
  }

  /** The ConfigMap WidgetReconciler writes for a widget. */
  private Resource<ConfigMap> marker(String widget) {
    return api.client().configMaps().inNamespace(api.namespace()).withName("widget-" + widget);
  }
}
