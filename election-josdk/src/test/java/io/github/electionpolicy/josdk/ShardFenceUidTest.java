package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sharded operator's fence over HTTP, with a real fabric8 client on the embedded server, whose dispatcher records
 * each write as it arrives: inside a reconciliation of g-0, every write of g-0 (its path or its status) carries g-0's
 * uid, in the form its content type allows, whatever fabric8 call sent it; a write of another object, a read, and a
 * write outside any reconciliation are sent as they were made.
 */
class ShardFenceUidTest {

  private static final KubernetesSerialization JSON = new KubernetesSerialization();

  /** Each write the server received: "METHOD path content-type" and the body. */
  private final List<List<String>> received = new CopyOnWriteArrayList<>();

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.of(LeaseApi.builder().dispatcher(delegate -> new Dispatcher() {
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
  }));

  private final ShardOwnership ownership = new ShardOwnership(Shards.of(1), null, (client, term) -> client);
  private final ShardGate gate = new ShardGate(Metrics.NOOP, ownership);
  private KubernetesClient fenced;
  private String gadgets;

  @BeforeEach
  void fence() {
    api.assumeEmbedded();
    ownership.own(0, TestTerms.valid("pod-a"));
    fenced = WriteGate.gate(api.client(), new ShardFence(gate, ownership));
    gadgets = "/apis/example.electionpolicy.io/v1/namespaces/" + api.namespace() + "/gadgets";
  }

  @AfterEach
  void close() {
    if (fenced != null) {
      fenced.close();
    }
  }

  @Test
  void everyWriteOfTheReconciledResourceCarriesItsUidAndNoOtherWriteIsChanged() {
    Gadget g0 = create("g-0");
    create("g-1");
    String uid = g0.getMetadata().getUid();
    received.clear();

    gate.reconciliationStarted(g0, Map.of());
    try {
      fenced.resources(Gadget.class).inNamespace(api.namespace()).withName("g-0").get();
      fenced.resources(Gadget.class).inNamespace(api.namespace()).withName("g-0")
          .edit(g -> { g.getSpec().setColor("red"); return g; });                          // JSON Patch
      fenced.resources(Gadget.class).inNamespace(api.namespace()).withName("g-0")
          .editStatus(g -> { g.setStatus(status("json")); return g; });                    // JSON Patch, status
      Gadget merged = Gadget.named(api.namespace(), "g-0");
      merged.setStatus(status("merge"));
      fenced.resources(Gadget.class).resource(merged).patchStatus();                       // merge patch, status
      Gadget current = fenced.resources(Gadget.class).inNamespace(api.namespace()).withName("g-0").get();
      current.getMetadata().setUid(null);
      fenced.resources(Gadget.class).resource(current).update();                           // PUT
      Gadget applied = Gadget.named(api.namespace(), "g-0");
      applied.setStatus(status("ssa"));
      assertThatThrownBy(() -> fenced.resources(Gadget.class).resource(applied).subresource("status")
          .patch(new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager("test")
              .withForce(true).build()))                                                   // apply, status
          .as("the embedded server answers a server-side apply with 415, once it received it")
          .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(415));
      fenced.resources(Gadget.class).inNamespace(api.namespace()).withName("g-1")
          .edit(g -> { g.getSpec().setColor("green"); return g; });                        // another gadget
      fenced.configMaps().inNamespace(api.namespace()).resource(new ConfigMapBuilder().withNewMetadata()
          .withName("g-0").endMetadata().build()).create();                                // another kind, same name
      fenced.resources(Gadget.class).inNamespace(api.namespace()).withName("g-0").delete(); // DELETE
    } finally {
      gate.reconciliationFinished(g0, null, Map.of());
    }
    Gadget again = create("g-0");
    fenced.resources(Gadget.class).inNamespace(api.namespace()).withName("g-0")
        .edit(g -> { g.getSpec().setColor("blue"); return g; });                           // outside any

    assertThat(received).extracting(w -> w.get(0)).containsExactly(
        "PATCH " + gadgets + "/g-0 application/json-patch+json",
        "PATCH " + gadgets + "/g-0/status application/json-patch+json",
        "PATCH " + gadgets + "/g-0/status application/merge-patch+json",
        "PUT " + gadgets + "/g-0 application/json",
        "PATCH " + gadgets + "/g-0/status application/apply-patch+yaml",
        "PATCH " + gadgets + "/g-1 application/json-patch+json",
        "POST /api/v1/namespaces/" + api.namespace() + "/configmaps application/json",
        "DELETE " + gadgets + "/g-0 application/json",
        "POST " + gadgets + " application/json",
        "PATCH " + gadgets + "/g-0 application/json-patch+json");
    Map<String, Object> uidTest = Map.of("op", "test", "path", "/metadata/uid", "value", uid);
    assertThat(jsonPatch(0)).first().isEqualTo(uidTest);
    assertThat(jsonPatch(0)).hasSizeGreaterThan(1);
    assertThat(jsonPatch(1)).first().isEqualTo(uidTest);
    assertThat(metadata(2)).containsEntry("uid", uid).containsEntry("name", "g-0");
    assertThat(metadata(3)).containsEntry("uid", uid).containsKey("resourceVersion");
    assertThat(metadata(4)).containsEntry("uid", uid);
    assertThat(jsonPatch(5)).as("another gadget's patch").doesNotContain(uidTest)
        .noneMatch(op -> String.valueOf(op).contains(uid));
    assertThat(received.get(6).get(1)).as("another kind's create").doesNotContain(uid);
    assertThat(object(7)).containsEntry("preconditions", Map.of("uid", uid));
    assertThat(jsonPatch(9)).as("outside any reconciliation")
        .noneMatch(op -> String.valueOf(op).contains(uid) || String.valueOf(op).contains(again.getMetadata().getUid()));
  }

  private Gadget create(String name) {
    return api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), name)).create();
  }

  private static Gadget.Status status(String by) {
    Gadget.Status status = new Gadget.Status();
    status.setReconciledBy(by);
    return status;
  }

  @SuppressWarnings("unchecked")
  private List<Map<String, Object>> jsonPatch(int write) {
    return JSON.unmarshal(received.get(write).get(1), List.class);
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> object(int write) {
    return JSON.unmarshal(received.get(write).get(1), Map.class);
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> metadata(int write) {
    return (Map<String, Object>) object(write).get("metadata");
  }
}
