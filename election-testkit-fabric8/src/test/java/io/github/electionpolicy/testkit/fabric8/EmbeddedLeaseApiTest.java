package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.authorization.v1.ResourceAttributesBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.github.electionpolicy.testsupport.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What the embedded Lease API promises a test: CRUD with conflicts, access reviews, faults and the write log. */
class EmbeddedLeaseApiTest {

  private static final String LEASE = "orders-controller";

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.of(LeaseApi.builder()
      .namespace("orders").target(ApiServerTarget.embedded()));

  private static Lease lease(String holder) {
    return new LeaseBuilder().withNewMetadata().withName(LEASE).endMetadata()
        .withNewSpec().withHolderIdentity(holder).withLeaseDurationSeconds(15).withLeaseTransitions(0).endSpec()
        .build();
  }

  private static SelfSubjectAccessReview review(String verb) {
    return new SelfSubjectAccessReviewBuilder().withNewSpec().withResourceAttributes(new ResourceAttributesBuilder()
        .withGroup("coordination.k8s.io").withResource("leases").withVerb(verb).withNamespace("orders").build())
        .endSpec().build();
  }

  private static boolean allowed(KubernetesClient client, String verb) {
    return client.authorization().v1().selfSubjectAccessReview().create(review(verb))
        .getStatus().getAllowed();
  }

  @Test
  void clientsDefaultToTheNamespaceAndTheServerRejectsAStaleWriteWith409() {
    KubernetesClient a = api.client();
    KubernetesClient b = api.client();
    Lease created = a.leases().resource(lease("a")).create();
    assertThat(created.getMetadata().getNamespace()).isEqualTo("orders");

    b.leases().resource(new LeaseBuilder(created).editSpec().withHolderIdentity("b").endSpec().build()).update();

    assertThatThrownBy(() -> a.leases().resource(
        new LeaseBuilder(created).editSpec().withHolderIdentity("a2").endSpec().build()).update())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
  }

  @Test
  void accessReviewsAreAllowedUnlessTheTestDeniesTheVerb() {
    KubernetesClient client = api.client();
    assertThat(allowed(client, "update")).isTrue();

    api.denyAccess(Set.of("update"));

    assertThat(allowed(client, "update")).isFalse();
    assertThat(allowed(client, "get")).isTrue();
  }

  @Test
  void anExpectationTheTestRegistersWinsOverTheFixturesAnswer() {
    api.mockServer().expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .andReturn(403, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":403}").once();
    KubernetesClient client = api.client();

    assertThatThrownBy(() -> allowed(client, "get"))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(403));
    assertThat(allowed(client, "get")).as("the fixture answers once the expectation is used up").isTrue();
  }

  @Test
  void withoutAnswersTheCrudStoreRejectsAnAccessReviewWith422() {
    try (LeaseApi crud = LeaseApi.builder().target(ApiServerTarget.embedded()).answerAccessReviews(false).start()) {
      assertThatThrownBy(() -> allowed(crud.client(), "get"))
          .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
    }
  }

  @Test
  void theWriteLogHasEveryAcceptedLeaseWriteInVersionOrderWithHolderAndTransitions() {
    KubernetesClient client = api.client();
    long before = System.nanoTime();
    Lease created = client.leases().resource(lease("a")).create();
    client.leases().resource(new LeaseBuilder(created).editSpec().withHolderIdentity("b").withLeaseTransitions(1)
        .endSpec().build()).update();
    assertThatThrownBy(() -> client.leases().resource(created).update())
        .isInstanceOf(KubernetesClientException.class);

    List<LeaseWrite> writes = api.leaseWrites(LEASE);

    assertThat(writes).extracting(LeaseWrite::holder).containsExactly("a", "b");
    assertThat(writes).extracting(LeaseWrite::leaseTransitions).containsExactly(0, 1);
    assertThat(writes.get(0).resourceVersion()).isLessThan(writes.get(1).resourceVersion());
    assertThat(writes.get(0).leaseDuration()).isEqualTo(Duration.ofSeconds(15));
    assertThat(writes).allSatisfy(write -> {
      assertThat(write.namespace()).isEqualTo("orders");
      assertThat(write.receivedNanos() - before).isPositive();
      assertThat(write.answeredNanos() - write.receivedNanos()).isNotNegative();
    });
  }

  @Test
  void aForeignWriterOverwritesTheHolderAndAWatchSeesEveryHolder() throws InterruptedException {
    List<String> holders = api.watchHolders(LEASE);
    api.client().leases().resource(lease("a")).create();

    api.overwriteHolder(LEASE, "intruder");

    assertThat(api.lease(LEASE)).hasValueSatisfying(
        lease -> assertThat(lease.getSpec().getHolderIdentity()).isEqualTo("intruder"));
    assertThat(await(() -> holders.equals(List.of("a", "intruder")))).as("watched holders %s", holders).isTrue();
  }

  @Test
  void aPartitionedReplicasRequestsHangWhileTheOthersGoThrough() throws Exception {
    ReplicaLink cut = api.replica("cut");
    ReplicaLink other = api.replica("other");
    HttpClient http = HttpClient.newHttpClient();

    cut.partition();

    assertThatThrownBy(() -> http.send(get(cut.url(), Duration.ofMillis(300)), HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(HttpTimeoutException.class);
    assertThat(http.send(get(other.url(), Duration.ofSeconds(5)), HttpResponse.BodyHandlers.ofString()).statusCode())
        .isEqualTo(200);

    cut.heal();
    assertThat(http.send(get(cut.url(), Duration.ofSeconds(5)), HttpResponse.BodyHandlers.ofString()).statusCode())
        .isEqualTo(200);
  }

  @Test
  void aReplicaWhoseConnectionsAreRefusedFailsAtOnce() {
    ReplicaLink replica = api.replica("down");
    replica.refuseConnections();

    // A plain HTTP client: fabric8's would retry with back-off for many seconds first.
    assertThatThrownBy(() -> HttpClient.newHttpClient().send(get(replica.url(), Duration.ofSeconds(5)),
        HttpResponse.BodyHandlers.ofString())).isInstanceOf(IOException.class)
        .isNotInstanceOf(HttpTimeoutException.class);
  }

  @Test
  void requestsAreCountedPerReplica() {
    ReplicaLink a = api.replica("a");
    api.replica("b").client();

    a.client().leases().withName(LEASE).get();
    a.client().leases().withName(LEASE).get();

    assertThat(a.requestCount()).isEqualTo(2);
    assertThat(api.replica("b").requestCount()).isZero();
  }

  @Test
  void aStoppedServerRefusesEveryClient() throws Exception {
    ReplicaLink replica = api.replica("r");
    HttpClient http = HttpClient.newHttpClient();
    assertThat(http.send(get(replica.url(), Duration.ofSeconds(5)), HttpResponse.BodyHandlers.ofString())
        .statusCode()).isEqualTo(200);

    api.stopServer();

    assertThatThrownBy(() -> http.send(get(api.url(), Duration.ofSeconds(5)), HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(IOException.class).isNotInstanceOf(HttpTimeoutException.class);
    assertThatThrownBy(() -> http.send(get(replica.url(), Duration.ofSeconds(5)), HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(IOException.class).isNotInstanceOf(HttpTimeoutException.class);
  }

  @Test
  void theEmbeddedServerIsOnTheLoopbackInterface() {
    assertThat(api.isEmbedded()).isTrue();
    assertThat(URI.create(api.url()).getHost()).isIn("127.0.0.1", "localhost");
    assertThat(URI.create(api.replica("r").url()).getHost()).isEqualTo("127.0.0.1");
  }

  private static HttpRequest get(String url, Duration timeout) {
    return HttpRequest.newBuilder(URI.create(url + "apis/coordination.k8s.io/v1/namespaces/orders/leases"))
        .timeout(timeout).GET().build();
  }

  static boolean await(BooleanSupplier condition) throws InterruptedException {
    return Await.holds(condition, Duration.ofSeconds(5));
  }

}
