package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the API server, with SelfSubjectAccessReviews, whether this process may get, create and update the
 * Lease before it contends, so a missing Role fails at start with the fix instead of as a stream of 403s.
 */
final class RbacPreflight {

  private static final Logger LOG = LoggerFactory.getLogger(ElectedReconcilers.class);

  private RbacPreflight() {}

  /** A one-off at start, not on the renew path: it may take the time a cold client needs to connect. */
  private static final long REVIEW_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);

  static void check(LeaseRequests requests, KubernetesClient userClient, String namespace, String leaseName) {
    List<String> missing = new ArrayList<>();
    for (String verb : LeaseAccessDeniedException.REQUIRED_VERBS) {
      Boolean allowed = review(requests, userClient, namespace, leaseName, verb);
      if (allowed == null) {
        return;
      }
      if (!allowed) {
        missing.add(verb);
      }
    }
    if (!missing.isEmpty()) {
      throw new LeaseAccessDeniedException(namespace, leaseName, missing);
    }
    Boolean watch = review(requests, userClient, namespace, leaseName, "watch");
    if (Boolean.FALSE.equals(watch)) {
      LOG.warn("Leader election may not watch leases in namespace \"{}\": followers will notice a released "
          + "Lease only at their next poll. To fix, add \"watch\" to the Role's verbs:\n{}", namespace,
          LeaseAccessDeniedException.roleYaml(namespace, leaseName));
    }
  }

  /** True or false as the server answers; null (after a warning) when the review API gave no verdict. */
  private static Boolean review(LeaseRequests requests, KubernetesClient userClient, String namespace,
      String leaseName, String verb) {
    // RBAC cannot restrict create by name, so create is asked without one.
    SelfSubjectAccessReview review = new SelfSubjectAccessReviewBuilder()
        .withNewSpec()
        .withNewResourceAttributes()
        .withGroup("coordination.k8s.io")
        .withResource("leases")
        .withVerb(verb)
        .withNamespace(namespace)
        .withName("create".equals(verb) ? null : leaseName)
        .endResourceAttributes()
        .endSpec()
        .build();
    try {
      SelfSubjectAccessReview answer = requests.call("SelfSubjectAccessReview",
          () -> userClient.authorization().v1().selfSubjectAccessReview().create(review), REVIEW_WAIT_NANOS);
      if (answer == null || answer.getStatus() == null || answer.getStatus().getAllowed() == null) {
        LOG.warn("The SelfSubjectAccessReview for \"{}\" on leases gave no verdict; skipping the RBAC "
            + "preflight and contending anyway", verb);
        return null;
      }
      return answer.getStatus().getAllowed();
    } catch (LeaseCallFailed refused) {
      LOG.warn("Could not check RBAC for leases with a SelfSubjectAccessReview ({}); contending anyway",
          refused.getMessage());
      return null;
    }
  }
}
