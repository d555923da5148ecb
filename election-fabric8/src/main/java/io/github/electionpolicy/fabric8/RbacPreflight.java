package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up check of {@link ElectionRunner}: a {@link LeaseAccess} review before contending, so a
 * missing Role fails at start with the fix instead of as a stream of 403s. It runs on a Lease I/O thread,
 * before the Lease loop, so {@code start()} never waits for the API server; the runner acts on a denial. Its
 * reviews are independent, so they are sent at once on the same I/O pool (see {@link LeaseAccess#review(String,
 * String, LeaseAccess.Reviewer, java.util.concurrent.Executor)}): the preflight costs about one round trip.
 */
final class RbacPreflight {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  private RbacPreflight() {}

  /**
   * Reviews the access; warns unless it is all granted; returns the failure that must stop the runner. Once
   * {@code closing} turns true it sends no further review and reports nothing.
   */
  static Optional<LeaseAccessDeniedException> check(KubernetesClient userClient, String namespace,
      LeaseSettings settings, BooleanSupplier closing, Executor io) {
    String leaseName = settings.leaseName();
    LeaseAccess access = LeaseAccess.review(namespace, leaseName, review -> {
      if (closing.getAsBoolean()) {
        throw new CancellationException("the runner is closing");
      }
      var answer = userClient.authorization().v1().selfSubjectAccessReview().create(review);
      return answer == null || answer.getStatus() == null
          ? Optional.empty() : Optional.ofNullable(answer.getStatus().getAllowed());
    }, io);
    if (closing.getAsBoolean()) {
      // The runner is not going to contend: there is nothing to warn of.
      return Optional.empty();
    }
    switch (access.verdict()) {
      case DENIED -> {
        return Optional.of(new LeaseAccessDeniedException(namespace, leaseName, access.deniedVerbs()));
      }
      case UNKNOWN -> LOG.warn("Could not check RBAC for leases: {}; contending anyway",
          access.unknownReason().orElseThrow());
      case GRANTED -> {
        if (access.watchDenied()) {
          LOG.warn("Leader election may not watch leases in namespace \"{}\": followers will notice a released "
              + "Lease only at their next poll, so a graceful hand-over takes up to one retry period ({}) instead "
              + "of milliseconds, and each follower reads the Lease every retry period instead of once per lease "
              + "duration ({}). To fix, grant the Role:\n{}", namespace, Durations.format(settings.retryPeriod()),
              Durations.format(settings.leaseDuration()), LeaseAccess.roleYaml(namespace, leaseName));
        }
      }
    }
    return Optional.empty();
  }
}
