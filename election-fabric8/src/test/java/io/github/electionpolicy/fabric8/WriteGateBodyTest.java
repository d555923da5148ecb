package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A check's {@link WriteGate.Check#bodyToSend} changes what a write is sent with, over HTTP with a real fabric8 client
 * (8.0.0 here, 7.6.1 in election-fabric8-compat7), the mock server's request log the judge: asked with each write's
 * method, path, content type and body; never for a read; the body it returns is the one the server receives, with the
 * method and content type unchanged; the one it was given when it returns that. The bodies are recorded as they reach
 * the server's dispatcher.
 */
class WriteGateBodyTest {

  private static final String CONFIGMAPS = "/api/v1/namespaces/" + MockApi.NAMESPACE + "/configmaps";

  /** Every write the server received: method, path, content type (without parameters) and body, in order. */
  private final List<List<String>> received = new CopyOnWriteArrayList<>();

  @RegisterExtension
  final MockApi api = new MockApi(delegate -> new Dispatcher() {
    @Override
    public MockResponse dispatch(RecordedRequest request) {
      if (!"GET".equals(request.getMethod())) {
        String type = request.getHeader("Content-Type");
        received.add(List.of(request.getMethod() + " " + request.getPath().replaceFirst("\\?.*", "") + " "
            + (type == null ? "" : type.replaceFirst(";.*", "")),
            request.getBody() == null ? "" : new String(request.getBody().getBytes(), StandardCharsets.UTF_8)));
      }
      return delegate.dispatch(request); // reads the body: recorded before
    }
  });
  private final KubernetesClient client = api.client();

  /** Records what it is asked; adds a marker to the body of writes of "orders" (a JSON object: a label). */
  private static final class Marking implements WriteGate.Check {
    final List<String> asked = new CopyOnWriteArrayList<>();

    @Override
    public void beforeWrite(String method, String path) {}

    @Override
    public String bodyToSend(String method, String path, String contentType, String body) {
      asked.add(method + " " + path + " " + contentType);
      if (!path.endsWith("/orders") || body == null) {
        return body;
      }
      return contentType.startsWith("application/json-patch+json")
          ? body.replaceFirst("^\\[", "[{\"op\":\"test\",\"path\":\"/metadata/name\",\"value\":\"orders\"},")
          : body.replaceFirst("^\\{", "{\"marked\":true,");
    }
  }

  @Test
  void theBodyTheCheckReturnsIsTheOneSentForEachWriteAndReadsAreNeverAsked() throws Exception {
    Marking check = new Marking();
    ConfigMap orders = client.configMaps().resource(configMap("orders")).create();
    client.configMaps().resource(configMap("other")).create();
    received.clear();
    try (KubernetesClient gated = WriteGate.gate(client, check)) {
      gated.configMaps().withName("orders").get();
      gated.configMaps().list();
      gated.configMaps().resource(new ConfigMapBuilder(orders).addToData("count", "2").build()).update();
      gated.configMaps().withName("orders").edit(c -> new ConfigMapBuilder(c).addToData("count", "3").build());
      gated.configMaps().withName("orders").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"data\":{\"n\":\"4\"}}");
      // The mock server answers these two with 415 Unsupported Media Type, once it received them.
      assertThatThrownBy(() -> gated.configMaps().withName("orders").patch(
          PatchContext.of(PatchType.STRATEGIC_MERGE), "{\"data\":{\"n\":\"5\"}}"))
          .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(415));
      assertThatThrownBy(() -> gated.configMaps().resource(configMap("orders")).patch(new PatchContext.Builder()
          .withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager("test").withForce(true).build()))
          .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(415));
      gated.configMaps().withName("other").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"data\":{\"n\":\"6\"}}");
      gated.configMaps().withName("orders").delete();

      List<List<String>> writes = List.copyOf(received);
      assertThat(check.asked).containsExactly(
          "PUT " + CONFIGMAPS + "/orders application/json",
          "PATCH " + CONFIGMAPS + "/orders application/json-patch+json",
          "PATCH " + CONFIGMAPS + "/orders application/merge-patch+json",
          "PATCH " + CONFIGMAPS + "/orders application/strategic-merge-patch+json",
          "PATCH " + CONFIGMAPS + "/orders application/apply-patch+yaml",
          "PATCH " + CONFIGMAPS + "/other application/merge-patch+json",
          "DELETE " + CONFIGMAPS + "/orders application/json");
      assertThat(writes).extracting(w -> w.get(0)).containsExactly(
          "PUT " + CONFIGMAPS + "/orders application/json",
          "PATCH " + CONFIGMAPS + "/orders application/json-patch+json",
          "PATCH " + CONFIGMAPS + "/orders application/merge-patch+json",
          "PATCH " + CONFIGMAPS + "/orders application/strategic-merge-patch+json",
          "PATCH " + CONFIGMAPS + "/orders application/apply-patch+yaml",
          "PATCH " + CONFIGMAPS + "/other application/merge-patch+json",
          "DELETE " + CONFIGMAPS + "/orders application/json");
      assertThat(writes.get(0).get(1)).startsWith("{\"marked\":true,").contains("\"count\":\"2\"");
      assertThat(writes.get(1).get(1))
          .startsWith("[{\"op\":\"test\",\"path\":\"/metadata/name\",\"value\":\"orders\"},").contains("count");
      assertThat(writes.get(2).get(1)).isEqualTo("{\"marked\":true,\"data\":{\"n\":\"4\"}}");
      assertThat(writes.get(3).get(1)).isEqualTo("{\"marked\":true,\"data\":{\"n\":\"5\"}}");
      assertThat(writes.get(4).get(1)).startsWith("{\"marked\":true,").contains("\"name\":\"orders\"");
      assertThat(writes.get(5).get(1)).as("another object's write, sent as it was made")
          .isEqualTo("{\"data\":{\"n\":\"6\"}}");
      assertThat(writes.get(6).get(1)).startsWith("{\"marked\":true,").contains("DeleteOptions");
    }
  }

  @Test
  void aCheckThatKeepsTheBodiesChangesNothingAndOneThatDropsABodyRefusesTheWrite() throws Exception {
    client.configMaps().resource(configMap("orders")).create();
    received.clear();
    WriteGate.Check keeping = (method, path) -> {};
    try (KubernetesClient gated = WriteGate.gate(client, keeping)) {
      gated.configMaps().withName("orders").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"data\":{\"n\":\"1\"}}");
    }
    assertThat(received).containsExactly(List.of("PATCH " + CONFIGMAPS + "/orders application/merge-patch+json",
        "{\"data\":{\"n\":\"1\"}}"));
    received.clear();

    WriteGate.Check dropping = new WriteGate.Check() {
      @Override
      public void beforeWrite(String method, String path) {}

      @Override
      public String bodyToSend(String method, String path, String contentType, String body) {
        return null;
      }
    };
    try (KubernetesClient gated = WriteGate.gate(client, dropping)) {
      assertThatThrownBy(() -> gated.configMaps().withName("orders")
          .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"data\":{\"n\":\"2\"}}"))
          .isInstanceOf(KubernetesClientException.class)
          .hasMessageContaining("refused PATCH " + CONFIGMAPS + "/orders").hasMessageContaining("was not sent");
    }
    assertThat(received).as("nothing sent").isEmpty();
    assertThat(client.configMaps().withName("orders").get().getData()).containsEntry("n", "1");
  }

  private static ConfigMap configMap(String name) {
    return new ConfigMapBuilder().withNewMetadata().withName(name).endMetadata().addToData("count", "1").build();
  }
}
