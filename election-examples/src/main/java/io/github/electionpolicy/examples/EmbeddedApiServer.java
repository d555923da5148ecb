package io.github.electionpolicy.examples;

import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;

/**
 * The demo's stand-in for a cluster: fabric8's mock API server in CRUD mode on a free port of the loopback
 * interface. CRUD mode stores what clients write and enforces {@code resourceVersion} conflicts with 409,
 * which is all a Lease election needs. It also answers SelfSubjectAccessReviews with "allowed", as a cluster
 * does for an administrator's kubeconfig, so the adapter's RBAC preflight runs for real and passes.
 *
 * <p>Thread-safe; close it once.
 */
final class EmbeddedApiServer implements AutoCloseable {

  // Held strongly: java.util.logging forgets the level of a logger nobody references.
  private static final java.util.logging.Logger MOCK_SERVER_LOG = quiet("io.fabric8.mockwebserver");

  private final KubernetesMockServer server;

  private EmbeddedApiServer(KubernetesMockServer server) {
    this.server = server;
  }

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
    logger.setLevel(java.util.logging.Level.WARNING);
    return logger;
  }

  /** Starts a server that grants every access review. */
  static EmbeddedApiServer start() {
    return start(true);
  }

  /**
   * Starts a server.
   *
   * @param answerAccessReviews whether to answer SelfSubjectAccessReviews with "allowed"; without, the CRUD
   *     store keeps the review as it was posted and returns it without a verdict
   */
  static EmbeddedApiServer start(boolean answerAccessReviews) {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), responses,
        new KubernetesMixedDispatcher(responses), false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    if (answerAccessReviews) {
      server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
          .andReply(201, request -> {
            SelfSubjectAccessReview review =
                Serialization.unmarshal(request.getUtf8Body(), SelfSubjectAccessReview.class);
            SubjectAccessReviewStatus status = new SubjectAccessReviewStatus();
            status.setAllowed(true);
            review.setStatus(status);
            return review;
          }).always();
    }
    return new EmbeddedApiServer(server);
  }

  String url() {
    return server.url("/");
  }

  /** A new client of this server; the caller closes it. */
  KubernetesClient newClient() {
    return server.createClient();
  }

  @Override
  public void close() {
    server.destroy();
  }
}
