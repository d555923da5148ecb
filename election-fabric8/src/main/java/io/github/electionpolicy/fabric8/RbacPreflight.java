package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up check of {@link ElectionRunner}: a {@link LeaseAccess} review before contending, so a
 * missing Role fails at start with the fix instead of as a stream of 403s. It runs on a Lease I/O thread,
 * before the Lease loop, so {@code start()} never waits for the API server; the runner acts on a denial. Its
 * reviews are independent, so they are sent at once on the same I/O pool (see {@link LeaseAccess#review(String,
 * String, LeaseAccess.Reviewer, java.util.concurrent.Executor)}): the preflight costs about one round trip.
 * With leadership Events on, one more review, sent at the same time, asks whether Events may be created; a
 * denial is a warning ({@link EventAccess}), never a reason not to contend.
 */
final class RbacPreflight {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  private RbacPreflight() {}

  /**
   * Reviews the access; warns unless it is all granted; returns the failure that must stop the runner. Once
   * {@code closing} turns true it sends no further review and reports nothing. {@code events} is where a denied
   * {@code create} on events is reported, {@code null} when leadership Events are off (then it is not asked).
   */
  static Optional<LeaseAccessDeniedException> check(KubernetesClient userClient, String namespace,
      LeaseSettings settings, BooleanSupplier closing, Executor io, EventAccess events) {
    String leaseName = settings.leaseName();
    LeaseAccess.Reviewer reviewer = review -> {
      if (closing.getAsBoolean()) {
        throw new CancellationException("the runner is closing");
      }
      var answer = userClient.authorization().v1().selfSubjectAccessReview().create(review);
      return answer == null || answer.getStatus() == null
          ? Optional.empty() : Optional.ofNullable(answer.getStatus().getAllowed());
    };
    FutureTask<Optional<Boolean>> eventsReview = null;
    if (events != null) {
      var question = events.question();
      eventsReview = new FutureTask<>(() -> reviewer.allowed(question));
      try {
        io.execute(eventsReview);
      } catch (RejectedExecutionException e) {
        // Run on this thread when its answer is needed.
      }
    }
    try {
      return check(namespace, settings, closing, LeaseAccess.review(namespace, leaseName, reviewer, io), events,
          eventsReview);
    } finally {
      if (eventsReview != null) {
        eventsReview.cancel(true);
      }
    }
  }

  private static Optional<LeaseAccessDeniedException> check(String namespace, LeaseSettings settings,
      BooleanSupplier closing, LeaseAccess access, EventAccess events, FutureTask<Optional<Boolean>> eventsReview) {
    String leaseName = settings.leaseName();
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
        if (eventsReview != null && eventsDenied(eventsReview)) {
          events.denied("the RBAC preflight found create on events denied");
        }
      }
    }
    return Optional.empty();
  }

  /** Whether the events review answered "denied"; a review that failed or gave no verdict is no denial. */
  private static boolean eventsDenied(FutureTask<Optional<Boolean>> review) {
    review.run(); // a no-op unless no I/O thread took it
    try {
      return review.get().map(allowed -> !allowed).orElse(false);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Exception e) {
      LOG.debug("Could not check RBAC for events: {}", e.toString());
      return false;
    }
  }
}
