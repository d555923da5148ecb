package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestBuilder;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestConditionBuilder;
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
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sharded operator's uid precondition ({@link UidPrecondition}, what {@code ShardFence} adds to each write of the
 * reconciled resource) against a real kube-apiserver 1.20, through a {@link WriteGate} on fabric8 8.0.0 whose check
 * makes the writes of one object conditional on its uid, as the fence does: the object is deleted and made again under
 * its name, and every write made for the first one is refused, in each form a write carries the uid, and the second
 * object is left as it was; an apply or a PUT made for it while no object has its name makes none (an apply without
 * the uid would); a Pod's eviction, a Namespace's finalize and a CSR's approval are refused as the object itself (1.20
 * serves neither ephemeralcontainers nor resize). For a custom resource's status subresource, the server takes the
 * stored object's metadata, so a merge patch (or an apply) of the status is not checked by its uid: pinned here, as
 * docs/sharding.md states it.
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
    UidPrecondition ofFirst = new UidPrecondition("", "configmaps", api.namespace(), "orders",
        first.getMetadata().getUid());
    try (KubernetesClient gated = conditionalOn(ofFirst)) {
      // An apply or a PUT creates an object that is not there; with the uid of one gone, neither does.
      assertThatThrownBy(() -> gated.configMaps().resource(orders("ssa")).patch(apply()))
          .as("an apply for the object gone, none under its name").satisfies(e -> assertThat(code(e)).isEqualTo(409));
      ConfigMap put = new ConfigMapBuilder(orders("put")).editMetadata()
          .withResourceVersion(first.getMetadata().getResourceVersion()).endMetadata().build();
      assertThatThrownBy(() -> gated.configMaps().resource(put).update())
          .as("a PUT for the object gone, none under its name").satisfies(e -> assertThat(code(e)).isEqualTo(409));
      assertThat(api.client().configMaps().inNamespace(api.namespace()).withName("orders").get())
          .as("not made again").isNull();
    }
    // Without the uid, the same late apply (with the first object's resourceVersion) makes it again: 1.20 creates.
    ConfigMap second = api.client().configMaps().resource(new ConfigMapBuilder(orders("2")).editMetadata()
        .withResourceVersion(first.getMetadata().getResourceVersion()).endMetadata().build()).patch(apply());
    assertThat(second.getMetadata().getUid()).isNotEqualTo(first.getMetadata().getUid());

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
      assertThatThrownBy(() -> orders.patch(PatchContext.of(PatchType.JSON_MERGE), "{\"data\":{\"count\":1e400}}"))
          .as("a number out of a double's range, refused as it is without the uid (not sent as \"Infinity\")")
          .satisfies(e -> assertThat(code(e)).isEqualTo(422));
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

  @Test
  void aPodMadeAgainUnderItsNameRefusesAnEvictionForThePodGone() {
    // No controller manager: the namespace's default service account is made by hand, and has no token to mount.
    api.client().serviceAccounts().inNamespace(api.namespace()).resource(new ServiceAccountBuilder()
        .withNewMetadata().withName("default").endMetadata().build()).createOr(NonDeletingOperation::update);
    var pods = api.client().pods().inNamespace(api.namespace());
    Pod first = pods.resource(worker()).create();
    awaitGone(() -> pods.withName("worker").withGracePeriod(0).delete(), () -> pods.withName("worker").get() == null);
    // Running, as a kubelet would say: 1.20 retries the deletion of a Pending (or terminal) pod's eviction on a
    // conflict, the uid's included, for 10 s before it answers 409 (fabric8's request timeout); a running pod's
    // eviction without a PodDisruptionBudget is answered at once.
    Pod second = pods.resource(pods.resource(worker()).create()).editStatus(p -> new PodBuilder(p).editOrNewStatus()
        .withPhase("Running").endStatus().build());
    UidPrecondition ofFirst = new UidPrecondition("", "pods", api.namespace(), "worker", first.getMetadata().getUid());

    try (KubernetesClient gated = conditionalOn(ofFirst)) {
      var worker = gated.pods().inNamespace(api.namespace()).withName("worker");
      assertThatThrownBy(worker::evict).as("an eviction whose deleteOptions.preconditions.uid is the first pod's")
          .satisfies(e -> assertThat(code(e)).isEqualTo(409));
      // kube-apiserver 1.20 serves neither (ephemeral containers are behind an alpha feature gate, resize came in
      // 1.27): the server answers 404, and the uid the fence adds is not checked here.
      assertThatThrownBy(() -> worker.subresource("ephemeralcontainers").patch(
          PatchContext.of(PatchType.STRATEGIC_MERGE), "{\"ephemeralContainers\":[]}"))
          .as("ephemeralcontainers, not served by 1.20").satisfies(e -> assertThat(code(e)).isEqualTo(404));
      assertThatThrownBy(() -> worker.subresource("resize").patch(PatchContext.of(PatchType.STRATEGIC_MERGE),
          "{\"spec\":{}}")).as("resize, not served by 1.20").satisfies(e -> assertThat(code(e)).isEqualTo(404));
    }
    assertThat(pods.withName("worker").get().getMetadata().getResourceVersion()).as("not evicted")
        .isEqualTo(second.getMetadata().getResourceVersion());

    try (KubernetesClient gated = conditionalOn(new UidPrecondition("", "pods", api.namespace(), "worker",
        second.getMetadata().getUid()))) {
      assertThat(gated.pods().inNamespace(api.namespace()).withName("worker").evict()).isTrue();
    }
    Await.until("the pod is evicted", () -> pods.withName("worker").get() == null, Duration.ofSeconds(30));
  }

  @Test
  void aNamespaceOrACsrMadeAgainUnderItsNameRefusesAFinalizeOrAnApprovalForTheOneGone() {
    String name = "uid-it-" + UUID.randomUUID().toString().substring(0, 8);
    var namespaces = api.client().namespaces();
    Namespace first = namespaces.resource(namespace(name)).create();
    // No namespace controller: a namespace deleted stays Terminating until its finalizers are cleared by hand.
    awaitGone(() -> {
      namespaces.withName(name).delete();
      namespaces.resource(withoutFinalizers(namespaces.withName(name).get())).subresource("finalize").update();
    }, () -> namespaces.withName(name).get() == null);
    Namespace second = namespaces.resource(namespace(name)).create();
    namespaces.withName(name).delete();
    Namespace terminating = namespaces.withName(name).get();

    try (KubernetesClient gated = conditionalOn(new UidPrecondition("", "namespaces", null, name,
        first.getMetadata().getUid()))) {
      assertThatThrownBy(() -> gated.namespaces().resource(withoutFinalizers(terminating)).subresource("finalize")
          .update())
          .as("a PUT of finalize with the first namespace's uid").satisfies(e -> assertThat(code(e)).isEqualTo(409));
    }
    assertThat(namespaces.withName(name).get().getMetadata().getResourceVersion()).as("not finalized")
        .isEqualTo(terminating.getMetadata().getResourceVersion());
    try (KubernetesClient gated = conditionalOn(new UidPrecondition("", "namespaces", null, name,
        second.getMetadata().getUid()))) {
      gated.namespaces().resource(withoutFinalizers(terminating)).subresource("finalize").update();
    }
    Await.until("the namespace is finalized", () -> namespaces.withName(name).get() == null, Duration.ofSeconds(30));

    var csrs = api.client().certificates().v1().certificateSigningRequests();
    CertificateSigningRequest firstCsr = csrs.resource(csr(name)).create();
    awaitGone(() -> csrs.withName(name).delete(), () -> csrs.withName(name).get() == null);
    CertificateSigningRequest secondCsr = csrs.resource(csr(name)).create();
    var approved = new CertificateSigningRequestConditionBuilder().withType("Approved").withStatus("True")
        .withReason("UidPreconditionIT").build();
    try (KubernetesClient gated = conditionalOn(new UidPrecondition("certificates.k8s.io",
        "certificatesigningrequests", null, name, firstCsr.getMetadata().getUid()))) {
      assertThatThrownBy(() -> gated.certificates().v1().certificateSigningRequests().withName(name)
          .approve(approved))
          .as("a PUT of approval with the first CSR's uid").satisfies(e -> assertThat(code(e)).isEqualTo(409));
    }
    assertThat(csrs.withName(name).get().getMetadata().getResourceVersion()).as("not approved")
        .isEqualTo(secondCsr.getMetadata().getResourceVersion());
    try (KubernetesClient gated = conditionalOn(new UidPrecondition("certificates.k8s.io",
        "certificatesigningrequests", null, name, secondCsr.getMetadata().getUid()))) {
      gated.certificates().v1().certificateSigningRequests().withName(name).approve(approved);
    }
    assertThat(csrs.withName(name).get().getStatus().getConditions()).extracting(c -> c.getType())
        .containsExactly("Approved");
    csrs.withName(name).delete();
  }

  private Pod worker() {
    return new PodBuilder().withNewMetadata().withName("worker").withNamespace(api.namespace()).endMetadata()
        .withNewSpec().withAutomountServiceAccountToken(false).addNewContainer().withName("c").withImage("busybox")
        .endContainer().endSpec().build();
  }

  private static Namespace namespace(String name) {
    return new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build();
  }

  private static Namespace withoutFinalizers(Namespace namespace) {
    return new NamespaceBuilder(namespace).editOrNewSpec().withFinalizers(List.of()).endSpec().build();
  }

  /** A CSR of a P-256 key for CN=uid-it, made once with openssl: the server checks only that it parses. */
  private static CertificateSigningRequest csr(String name) {
    return new CertificateSigningRequestBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
        .withSignerName("example.com/uid-it").withUsages("client auth").withRequest(CSR_PEM).endSpec().build();
  }

  private static final String CSR_PEM = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlITE1ITUNBUUF3RVRFUE1B"
      + "MEdBMVVFQXd3R2RXbGtMV2wwTUZrd0V3WUhLb1pJemowQ0FRWUlLb1pJemowRApBUWNEUWdBRXhNa3NxMVhUT09kM3hXMU14cWdTVmVT"
      + "MTNId2JXUjNFNlJJbmRWNlp5ano2RE1Hc3VBR3NuRUtJCmsyZkZTcmE3VTkzL0l0N21pdzIwZnl1RHBtbC9NcUFBTUFvR0NDcUdTTTQ5"
      + "QkFNQ0EwZ0FNRVVDSVFEN28wbHYKWmFHYS9aTXA1b0g3RWhhcDdKbGl3blJKcDJ5WEF2V2gyNCtReEFJZ2Vocit0cDFMNlptcDkyOVA5"
      + "cm9BWDJXdQo2Smkwd0h0bm80VjV6NVRNS0ZRPQotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K";

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
