package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up check of {@link ElectionRunner}: a {@link LeaseAccess} review before contending, so a
 * missing Role fails at start with the fix instead of as a stream of 403s.
 */
final class RbacPreflight {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  /** A one-off at start, not on the renew path: it may take the time a cold client needs to connect. */
  private static final long REVIEW_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

  private RbacPreflight() {}

  static void check(LeaseRequests requests, KubernetesClient userClient, String namespace, String leaseName) {
    LeaseAccess access = LeaseAccess.review(namespace, leaseName, review -> {
      var answer = requests.call("SelfSubjectAccessReview",
          () -> userClient.authorization().v1().selfSubjectAccessReview().create(review), REVIEW_WAIT_NANOS);
      return answer == null || answer.getStatus() == null
          ? Optional.empty() : Optional.ofNullable(answer.getStatus().getAllowed());
    });
    switch (access.verdict()) {
      case DENIED -> throw new LeaseAccessDeniedException(namespace, leaseName, access.deniedVerbs());
      case UNKNOWN -> LOG.warn("Could not check RBAC for leases: {}; contending anyway",
          access.unknownReason().orElseThrow());
      case GRANTED -> {
        if (access.watchDenied()) {
          LOG.warn("Leader election may not watch leases in namespace \"{}\": followers will notice a released "
              + "Lease only at their next poll. To fix, grant the Role:\n{}", namespace,
              LeaseAccess.roleYaml(namespace, leaseName));
        }
      }
    }
  }
}
