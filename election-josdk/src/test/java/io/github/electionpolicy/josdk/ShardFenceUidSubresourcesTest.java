package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.EphemeralContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.fabric8.TestTerms;
import io.github.electionpolicy.fabric8.WriteGate;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fence's uid condition on the writes of a reconciled Pod through its subresources other than status and scale
 * (review h-review). A StatefulSet's pod is made again under its name with another uid, maybe of a shard another
 * replica owns: a reconciliation of the old one that evicts its pod ({@code POST .../eviction}, whose {@code
 * deleteOptions} take a uid precondition) or adds an ephemeral container ({@code PATCH .../ephemeralcontainers}, a
 * patch of the pod) must not land on the new one. The embedded server records each write under the pod's path and
 * answers it with the pod.
 */
class ShardFenceUidSubresourcesTest {

  private static final KubernetesSerialization JSON = new KubernetesSerialization();
  private static final String UID = "6f1c8a52-0000-4000-8000-00000000000b";

  /** Each write the server received under the pod's path: "METHOD path" and the body. */
  private final List<List<String>> received = new CopyOnWriteArrayList<>();

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.of(LeaseApi.builder().dispatcher(delegate -> new Dispatcher() {
    @Override
    public MockResponse dispatch(RecordedRequest request) {
      String path = request.getPath() == null ? "" : request.getPath().replaceFirst("\\?.*", "");
      if (!path.startsWith("/api/v1/namespaces/" + api.namespace() + "/pods/p-0")) {
        return delegate.dispatch(request);
      }
      if (!"GET".equals(request.getMethod())) {
        received.add(List.of(request.getMethod() + " " + path,
            request.getBody() == null ? "" : new String(request.getBody().getBytes(), StandardCharsets.UTF_8)));
      }
      return new MockResponse().setResponseCode(path.endsWith("/eviction") ? 201 : 200)
          .setHeader("Content-Type", "application/json").setBody(JSON.asJson(pod()));
    }
  }));

  private final ShardOwnership ownership = new ShardOwnership(Shards.of(1), null, (client, term) -> client);
  private final ShardGate gate = new ShardGate(Metrics.NOOP, ownership);
  private KubernetesClient fenced;

  private Pod pod() {
    return new PodBuilder().withNewMetadata().withNamespace(api.namespace()).withName("p-0").withUid(UID)
        .withResourceVersion("7").endMetadata().withNewSpec().addNewContainer().withName("app").withImage("app")
        .endContainer().endSpec().build();
  }

  @AfterEach
  void close() {
    if (fenced != null) {
      fenced.close();
    }
  }

  @Test
  void anEvictionAndAnEphemeralContainerOfTheReconciledPodCarryItsUid() {
    api.assumeEmbedded();
    ownership.own(0, TestTerms.valid("pod-a"));
    fenced = WriteGate.gate(api.client(), new ShardFence(gate, ownership));
    Pod reconciled = pod();

    gate.reconciliationStarted(reconciled, Map.of());
    try {
      fenced.pods().inNamespace(api.namespace()).withName("p-0").ephemeralContainers()
          .edit(p -> new PodBuilder(p).editSpec().addToEphemeralContainers(new EphemeralContainerBuilder()
              .withName("debug").withImage("busybox").build()).endSpec().build());
      fenced.pods().inNamespace(api.namespace()).withName("p-0").evict();
    } finally {
      gate.reconciliationFinished(reconciled, null, Map.of());
    }

    String pod = "/api/v1/namespaces/" + api.namespace() + "/pods/p-0";
    assertThat(received).extracting(w -> w.get(0)).containsExactly(
        "PATCH " + pod + "/ephemeralcontainers", "POST " + pod + "/eviction");
    assertThat(JSON.unmarshal(received.get(0).get(1), List.class)).as("the ephemeral container's JSON Patch").first()
        .isEqualTo(Map.of("op", "test", "path", "/metadata/uid", "value", UID));
    assertThat(JSON.unmarshal(received.get(1).get(1), Map.class).get("deleteOptions")).as("the eviction")
        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
        .containsEntry("preconditions", Map.of("uid", UID));
  }
}
