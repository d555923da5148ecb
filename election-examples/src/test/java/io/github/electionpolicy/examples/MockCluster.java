package io.github.electionpolicy.examples;

import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.net.InetAddress;
import java.time.ZonedDateTime;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.Set;

/**
 * A fabric8 mock API server in CRUD mode for the tool's tests, reached over HTTP; optionally it answers
 * SelfSubjectAccessReviews like a real server, allowing every verb except the denied ones.
 */
final class MockCluster implements AutoCloseable {

  static final String NAMESPACE = "elections";
  static final String LEASE = "orders-controller";

  // Held strongly: java.util.logging forgets the level of a logger nobody references.
  private static final java.util.logging.Logger MOCK_SERVER_LOG = quiet("io.fabric8.mockwebserver");

  final KubernetesMockServer server;

  private MockCluster(boolean answerReviews, Set<String> deniedVerbs) {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    server = new KubernetesMockServer(new Context(), new MockWebServer(), responses,
        new KubernetesMixedDispatcher(responses), false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    if (answerReviews) {
      server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
          .andReply(201, request -> {
            SelfSubjectAccessReview review =
                Serialization.unmarshal(request.getUtf8Body(), SelfSubjectAccessReview.class);
            SubjectAccessReviewStatus status = new SubjectAccessReviewStatus();
            status.setAllowed(!deniedVerbs.contains(review.getSpec().getResourceAttributes().getVerb()));
            review.setStatus(status);
            return review;
          }).always();
    }
  }

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
    logger.setLevel(java.util.logging.Level.WARNING);
    return logger;
  }

  /** Pure CRUD: a SelfSubjectAccessReview is stored and returned as posted, without a verdict. */
  static MockCluster crudOnly() {
    return new MockCluster(false, Set.of());
  }

  static MockCluster answeringReviews(Set<String> deniedVerbs) {
    return new MockCluster(true, deniedVerbs);
  }

  String url() {
    return server.url("/");
  }

  KubernetesClient client() {
    Config config = new ConfigBuilder(Config.empty()).withMasterUrl(url()).withNamespace(NAMESPACE).build();
    return new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(new JdkHttpClientFactory())
        .build();
  }

  Lease createLease(String holder) {
    try (KubernetesClient client = client()) {
      ZonedDateTime now = ZonedDateTime.now();
      return client.leases().inNamespace(NAMESPACE).resource(new LeaseBuilder()
          .withNewMetadata().withName(LEASE).withNamespace(NAMESPACE).endMetadata()
          .withNewSpec().withHolderIdentity(holder).withLeaseDurationSeconds(15).withLeaseTransitions(3)
          .withAcquireTime(now).withRenewTime(now).endSpec()
          .build()).create();
    }
  }

  Lease lease() {
    try (KubernetesClient client = client()) {
      return client.leases().inNamespace(NAMESPACE).withName(LEASE).get();
    }
  }

  @Override
  public void close() {
    server.destroy();
  }
}
