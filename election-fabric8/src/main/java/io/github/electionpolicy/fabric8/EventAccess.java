package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether one runner may record its leadership Events, as far as it found out: RBAC's {@code create} on
 * {@code events} in the Lease's namespace is advice only (without it the election runs as before, unrecorded),
 * so a denial, found by the RBAC preflight or by a write the server refused, is reported once, by one WARN that
 * names the missing verb and the rule that grants it, and then ignored. Thread-safe.
 */
final class EventAccess {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  private final String namespace;
  private final String leaseName;
  private final AtomicBoolean reported = new AtomicBoolean();

  EventAccess(String namespace, String leaseName) {
    this.namespace = namespace;
    this.leaseName = leaseName;
  }

  /** The review that asks whether this process may create Events in the namespace. */
  SelfSubjectAccessReview question() {
    return new SelfSubjectAccessReviewBuilder()
        .withNewSpec()
        .withNewResourceAttributes()
        .withGroup("")
        .withResource("events")
        .withVerb("create")
        .withNamespace(namespace)
        .endResourceAttributes()
        .endSpec()
        .build();
  }

  /** Reports that {@code create} on events is denied ({@code how}: who found out); a WARN the first time only. */
  void denied(String how) {
    if (!reported.compareAndSet(false, true)) {
      LOG.debug("Leadership Event of Lease {}/{} not recorded: {}", namespace, leaseName, how);
      return;
    }
    LOG.warn("Leader election may not create events in namespace \"{}\" ({}): the leadership changes of Lease {}/{} "
        + "are not recorded as Events; the election is not affected. To fix, add this rule to the Role (or turn "
        + "the Events off with LeaseSettings.leadershipEvents(false)):\n{}", namespace, how, namespace, leaseName,
        LeaseAccess.EVENTS_RULE_YAML);
  }

  /** Whether a denial was reported. */
  boolean deniedReported() {
    return reported.get();
  }
}
