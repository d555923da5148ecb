package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.github.electionpolicy.fabric8.WriteGate;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sharded operator's uid precondition ({@link UidPrecondition}, what {@code ShardFence} adds to each write of the
 * reconciled resource) against a real kube-apiserver 1.20, through a {@link WriteGate} on fabric8 8.0.0 whose check
 * makes the writes of one object conditional on its uid, as the fence does: the object is deleted and made again under
 * its name, and every write made for the first one is refused, in each form a write carries the uid, and the second
 * object is left as it was. For a custom resource's status subresource, the server takes the stored object's metadata,
 * so a merge patch (or an apply) of the status is not checked by its uid: pinned here, as docs/sharding.md states it.
 */
class UidPreconditionIT {

  private static final ResourceDefinitionContext GADGETS = new ResourceDefinitionContext.Builder()
      .withGroup("example.electionpolicy.io").withVersion("v1").withKind("Gadget").withPlural("gadgets")
      .withNamespaced(true).build();

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** A view of the test's client whose writes of {@code precondition}'s object carry its uid, as the fence's do. */
  private KubernetesClient conditionalOn(UidPrecondition precondition) {
    return WriteGate.gate(api.client(), new WriteGate.Check() {
      @Override
      public void beforeWrite(String method, String path) {}

      @Override
      public String bodyToSend(String method, String path, String contentType, String body) {
        return precondition.isPathOf(path) ? precondition.withUid(method, path, contentType, body) : body;
      }
    });
  }

  @Test
  void everyWriteMadeForAnObjectGoneIsRefusedOnTheObjectMadeAgainUnderItsName() {
    ConfigMap first = api.client().configMaps().resource(orders("1")).create();
    awaitGone(() -> api.client().resource(first).delete(),
        () -> api.client().configMaps().inNamespace(api.namespace()).withName("orders").get() == null);
    ConfigMap second = api.client().configMaps().resource(orders("2")).create();
    assertThat(second.getMetadata().getUid()).isNotEqualTo(first.getMetadata().getUid());
    UidPrecondition ofFirst = new UidPrecondition("", "configmaps", api.namespace(), "orders",
        first.getMetadata().getUid());

    try (KubernetesClient gated = conditionalOn(ofFirst)) {
      var orders = gated.configMaps().inNamespace(api.namespace()).withName("orders");
      assertThatThrownBy(() -> orders.edit(c -> new ConfigMapBuilder(c).addToData("count", "json").build()))
          .as("a JSON Patch, whose test of the uid fails").satisfies(e -> assertThat(code(e)).isEqualTo(422));
      assertThatThrownBy(() -> orders.patch(PatchContext.of(PatchType.JSON_MERGE), "{\"data\":{\"count\":\"m\"}}"))
          .as("a merge patch, whose uid would change").satisfies(e -> assertThat(code(e)).isEqualTo(422));
      assertThatThrownBy(() -> orders.patch(PatchContext.of(PatchType.STRATEGIC_MERGE),
          "{\"data\":{\"count\":\"s\"}}"))
          .as("a strategic merge patch").satisfies(e -> assertThat(code(e)).isEqualTo(422));
      assertThatThrownBy(() -> gated.configMaps().resource(orders("ssa")).patch(apply()))
          .as("a server-side apply").satisfies(e -> assertThat(code(e)).isEqualTo(422));
      ConfigMap read = orders.get();
      assertThatThrownBy(() -> gated.configMaps().resource(new ConfigMapBuilder(read).addToData("count", "put")
          .build()).update())
          .as("a PUT, whose uid is a precondition").satisfies(e -> assertThat(code(e)).isEqualTo(409));
      assertThatThrownBy(orders::delete)
          .as("a DELETE with a uid precondition").satisfies(e -> assertThat(code(e)).isEqualTo(409));
    }
    ConfigMap now = api.client().configMaps().inNamespace(api.namespace()).withName("orders").get();
    assertThat(now.getMetadata().getUid()).isEqualTo(second.getMetadata().getUid());
    assertThat(now.getMetadata().getResourceVersion()).as("not written").isEqualTo(second.getMetadata()
        .getResourceVersion());

    UidPrecondition ofSecond = new UidPrecondition("", "configmaps", api.namespace(), "orders",
        second.getMetadata().getUid());
    try (KubernetesClient gated = conditionalOn(ofSecond)) {
      var orders = gated.configMaps().inNamespace(api.namespace()).withName("orders");
      orders.edit(c -> new ConfigMapBuilder(c).addToData("count", "3").build());
      orders.patch(PatchContext.of(PatchType.JSON_MERGE), "{\"data\":{\"count\":\"4\"}}");
      gated.configMaps().resource(orders("5")).patch(apply());
      assertThat(orders.get().getData()).as("the object's own uid: every write lands").containsEntry("count", "5");
      orders.delete();
    }
  }

  @Test
  void aCustomResourcesStatusIsCheckedByAJsonPatchOrAPutButNotByTheUidOfAMergePatchOrApply() {
    gadgetDefinition();
    var gadgets = api.client().genericKubernetesResources(GADGETS).inNamespace(api.namespace());
    GenericKubernetesResource first = gadgets.resource(gadget("blue")).create();
    awaitGone(() -> gadgets.withName("g-0").delete(), () -> gadgets.withName("g-0").get() == null);
    GenericKubernetesResource second = gadgets.resource(gadget("green")).create();
    UidPrecondition ofFirst = new UidPrecondition("example.electionpolicy.io", "gadgets", api.namespace(), "g-0",
        first.getMetadata().getUid());

    try (KubernetesClient gated = conditionalOn(ofFirst)) {
      var g0 = gated.genericKubernetesResources(GADGETS).inNamespace(api.namespace()).withName("g-0");
      assertThatThrownBy(() -> g0.editStatus(g -> {
        g.setAdditionalProperty("status", Map.of("reconciledBy", "json"));
        return g;
      })).as("a JSON Patch of the status").satisfies(e -> assertThat(code(e)).isEqualTo(422));
      GenericKubernetesResource read = g0.get();
      read.setAdditionalProperty("status", Map.of("reconciledBy", "put"));
      assertThatThrownBy(() -> gated.genericKubernetesResources(GADGETS).resource(read).updateStatus())
          .as("a PUT of the status").satisfies(e -> assertThat(code(e)).isEqualTo(409));
      assertThatThrownBy(() -> g0.patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"color\":\"red\"}}"))
          .as("a merge patch of the resource").satisfies(e -> assertThat(code(e)).isEqualTo(422));
      assertThat(gadgets.withName("g-0").get().getMetadata().getResourceVersion())
          .isEqualTo(second.getMetadata().getResourceVersion());

      // The limit: kube-apiserver takes a custom resource's metadata from the stored object for a status update.
      GenericKubernetesResource status = gadget("green");
      status.setAdditionalProperty("status", Map.of("reconciledBy", "merge"));
      gated.genericKubernetesResources(GADGETS).resource(status).patchStatus();
      assertThat(gadgets.withName("g-0").get().getAdditionalProperties().get("status"))
          .as("a merge patch of the status lands whatever its metadata.uid")
          .isEqualTo(Map.of("reconciledBy", "merge"));
      status.setAdditionalProperty("status", Map.of("reconciledBy", "apply"));
      gated.genericKubernetesResources(GADGETS).resource(status).subresource("status").patch(apply());
      assertThat(gadgets.withName("g-0").get().getAdditionalProperties().get("status"))
          .as("an apply of the status lands whatever its metadata.uid").isEqualTo(Map.of("reconciledBy", "apply"));
    }
    assertThat(gadgets.withName("g-0").get().getMetadata().getUid()).isEqualTo(second.getMetadata().getUid());
  }

  private ConfigMap orders(String count) {
    return new ConfigMapBuilder().withNewMetadata().withName("orders").withNamespace(api.namespace()).endMetadata()
        .addToData("count", count).build();
  }

  private static int code(Throwable e) {
    return ((KubernetesClientException) e).getCode();
  }

  private void awaitGone(Runnable delete, java.util.function.BooleanSupplier gone) {
    delete.run();
    Await.until("the first object is gone", gone, Duration.ofSeconds(30));
  }

  private void gadgetDefinition() {
    CustomResourceDefinition crd = new CustomResourceDefinitionBuilder()
        .withNewMetadata().withName("gadgets.example.electionpolicy.io").endMetadata()
        .withNewSpec().withGroup("example.electionpolicy.io").withScope("Namespaced")
        .withNewNames().withKind("Gadget").withPlural("gadgets").withSingular("gadget").endNames()
        .addNewVersion().withName("v1").withServed(true).withStorage(true)
        .withNewSubresources().withNewStatus().endStatus().endSubresources()
        .withNewSchema().withNewOpenAPIV3Schema().withType("object").withXKubernetesPreserveUnknownFields(true)
        .endOpenAPIV3Schema().endSchema().endVersion()
        .endSpec().build();
    api.client().apiextensions().v1().customResourceDefinitions().resource(crd)
        .createOr(NonDeletingOperation::update);
    api.client().apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName())
        .waitUntilCondition(c -> c != null && c.getStatus() != null && c.getStatus().getConditions().stream()
            .anyMatch(k -> "Established".equals(k.getType()) && "True".equals(k.getStatus())), 1, TimeUnit.MINUTES);
  }

  private GenericKubernetesResource gadget(String color) {
    return new GenericKubernetesResourceBuilder().withApiVersion("example.electionpolicy.io/v1").withKind("Gadget")
        .withNewMetadata().withName("g-0").withNamespace(api.namespace()).endMetadata()
        .addToAdditionalProperties("spec", Map.of("color", color)).build();
  }

  private static PatchContext apply() {
    return new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager("uid-it")
        .withForce(true).build();
  }
}
