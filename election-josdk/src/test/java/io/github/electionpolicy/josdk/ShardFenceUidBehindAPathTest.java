package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.fabric8.TestTerms;
import io.github.electionpolicy.fabric8.WriteGate;
import io.github.electionpolicy.josdk.sample.Gadget;
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
 * The fence's uid condition when the client's master URL has a path of its own, as a proxy in front of the API
 * server gives it (Rancher's {@code https://rancher.example/k8s/clusters/c-1}, {@code kubectl proxy --api-prefix}):
 * every request path then begins with that prefix, and a write of the reconciled resource must carry its uid all the
 * same (review h-review). The embedded server stands for the proxy: it records each write under the prefix and
 * answers it with the gadget.
 */
class ShardFenceUidBehindAPathTest {

  private static final KubernetesSerialization JSON = new KubernetesSerialization();
  private static final String PREFIX = "/k8s/clusters/c-1";
  private static final String UID = "6f1c8a52-0000-4000-8000-00000000000a";

  /** Each write the proxy received: "METHOD path" and the body. */
  private final List<List<String>> received = new CopyOnWriteArrayList<>();

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.of(LeaseApi.builder().dispatcher(delegate -> new Dispatcher() {
    @Override
    public MockResponse dispatch(RecordedRequest request) {
      String path = request.getPath() == null ? "" : request.getPath().replaceFirst("\\?.*", "");
      if (!path.startsWith(PREFIX + "/")) {
        return delegate.dispatch(request);
      }
      received.add(List.of(request.getMethod() + " " + path,
          request.getBody() == null ? "" : new String(request.getBody().getBytes(), StandardCharsets.UTF_8)));
      return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
          .setBody(JSON.asJson(gadget()));
    }
  }));

  private final ShardOwnership ownership = new ShardOwnership(Shards.of(1), null, (client, term) -> client);
  private final ShardGate gate = new ShardGate(Metrics.NOOP, ownership);
  private KubernetesClient proxied;
  private KubernetesClient fenced;

  private Gadget gadget() {
    Gadget gadget = Gadget.named(api.namespace(), "g-0");
    gadget.getMetadata().setUid(UID);
    gadget.getMetadata().setResourceVersion("7");
    return gadget;
  }

  @AfterEach
  void close() {
    if (fenced != null) {
      fenced.close();
    }
    if (proxied != null) {
      proxied.close();
    }
  }

  @Test
  void aWriteOfTheReconciledResourceThroughAMasterUrlWithAPathCarriesItsUid() {
    api.assumeEmbedded();
    ownership.own(0, TestTerms.valid("pod-a"));
    proxied = new KubernetesClientBuilder().withConfig(new ConfigBuilder(api.client().getConfiguration())
        .withMasterUrl(api.url().replaceFirst("/$", "") + PREFIX + "/").withHttp2Disable(true).build()).build();
    fenced = WriteGate.gate(proxied, new ShardFence(gate, ownership));
    Gadget reconciled = gadget();

    gate.reconciliationStarted(reconciled, Map.of());
    try {
      Gadget status = gadget();
      status.getMetadata().setUid(null);
      status.setStatus(new Gadget.Status());
      fenced.resources(Gadget.class).resource(status).patchStatus();                       // merge patch, status
      Gadget put = gadget();
      put.getMetadata().setUid(null);
      fenced.resources(Gadget.class).resource(put).update();                               // PUT
      fenced.resources(Gadget.class).inNamespace(api.namespace()).withName("g-0").delete(); // DELETE
    } finally {
      gate.reconciliationFinished(reconciled, null, Map.of());
    }

    String gadgets = PREFIX + "/apis/example.electionpolicy.io/v1/namespaces/" + api.namespace() + "/gadgets";
    assertThat(received).extracting(w -> w.get(0)).containsExactly(
        "PATCH " + gadgets + "/g-0/status", "PUT " + gadgets + "/g-0", "DELETE " + gadgets + "/g-0");
    assertThat(object(0).get("metadata")).as("the status patch").isEqualTo(Map.of("name", "g-0",
        "namespace", api.namespace(), "uid", UID, "resourceVersion", "7"));
    assertThat(object(1).get("metadata")).as("the PUT").isEqualTo(Map.of("name", "g-0",
        "namespace", api.namespace(), "uid", UID, "resourceVersion", "7"));
    assertThat(object(2)).as("the DELETE").containsEntry("preconditions", Map.of("uid", UID));
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> object(int write) {
    return JSON.unmarshal(received.get(write).get(1), Map.class);
  }
}
