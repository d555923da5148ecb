package io.github.electionpolicy.examples;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import java.time.ZonedDateTime;
import java.util.Set;

/**
 * The tool's tests on the embedded Lease API of {@code election-testkit-fabric8}, reached over HTTP; optionally
 * it answers SelfSubjectAccessReviews like a real server, allowing every verb except the denied ones.
 */
final class MockCluster implements AutoCloseable {

  static final String NAMESPACE = "elections";
  static final String LEASE = "orders-controller";

  private final LeaseApi api;
  private final KubernetesClient client;

  private MockCluster(boolean answerReviews, Set<String> deniedVerbs) {
    api = LeaseApi.builder().namespace(NAMESPACE).target(ApiServerTarget.embedded())
        .answerAccessReviews(answerReviews).start();
    if (answerReviews) {
      api.denyAccess(deniedVerbs);
    }
    client = api.client();
  }

  /** Pure CRUD: the store rejects a SelfSubjectAccessReview (it has no name) with HTTP 422. */
  static MockCluster crudOnly() {
    return new MockCluster(false, Set.of());
  }

  static MockCluster answeringReviews(Set<String> deniedVerbs) {
    return new MockCluster(true, deniedVerbs);
  }

  String url() {
    return api.url();
  }

  Lease createLease(String holder) {
    ZonedDateTime now = ZonedDateTime.now();
    return client.leases().inNamespace(NAMESPACE).resource(new LeaseBuilder()
        .withNewMetadata().withName(LEASE).withNamespace(NAMESPACE).endMetadata()
        .withNewSpec().withHolderIdentity(holder).withLeaseDurationSeconds(15).withLeaseTransitions(3)
        .withAcquireTime(now).withRenewTime(now).endSpec()
        .build()).create();
  }

  Lease lease() {
    return api.lease(LEASE).orElse(null);
  }

  @Override
  public void close() {
    api.close();
  }
}
