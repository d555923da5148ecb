package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRule;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReviewBuilder;
import java.util.List;
import java.util.Objects;

/**
 * The RBAC preflight's first question: one {@code SelfSubjectRulesReview} of the Lease's namespace, which lists
 * the resource rules the server can tell this identity holds there, and what those rules allow, judged the way
 * RBAC judges a request ({@code RuleAllows} in Kubernetes' {@code rbac/validation}): a rule allows a request when
 * its verbs, API groups and resources each list the request's or {@code *}, and its resource names are empty or
 * list the request's name (so a rule with names never allows {@code create}, which has none).
 *
 * <p>Only an allow is taken from the rules. A list is no proof of a denial: it may be incomplete (a webhook
 * authorizer lists nothing), so whatever the rules do not show allowed is asked as today, one {@code
 * SelfSubjectAccessReview} per verb (see {@link RbacPreflight}). The one thing a list cannot show is a denial by an
 * authorizer ahead of RBAC that denies explicitly; the runner would then meet the server's 403 at its first write
 * instead of at the preflight, as without a preflight. Immutable.
 */
final class LeaseRules {

  static final String LEASE_GROUP = "coordination.k8s.io";
  static final String LEASES = "leases";

  private final List<ResourceRule> rules;

  private LeaseRules(List<ResourceRule> rules) {
    this.rules = List.copyOf(rules);
  }

  /** The rules of an answered review; none when it carries no status (then nothing is shown allowed). */
  static LeaseRules of(SelfSubjectRulesReview answer) {
    if (answer == null || answer.getStatus() == null || answer.getStatus().getResourceRules() == null) {
      return new LeaseRules(List.of());
    }
    return new LeaseRules(answer.getStatus().getResourceRules().stream().filter(Objects::nonNull).toList());
  }

  /** The question: the rules of this identity in {@code namespace}. */
  static SelfSubjectRulesReview question(String namespace) {
    return new SelfSubjectRulesReviewBuilder().withNewSpec().withNamespace(namespace).endSpec().build();
  }

  /** Whether every verb leader election needs on the Lease ({@link LeaseAccess#REQUIRED_VERBS}) is allowed. */
  boolean grantRequired(String leaseName) {
    for (String verb : LeaseAccess.REQUIRED_VERBS) {
      if (!allowsOnLease(verb, leaseName)) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code verb} on the Lease is allowed (by name, except {@code create}, which has none). */
  boolean allowsOnLease(String verb, String leaseName) {
    return allows(LEASE_GROUP, LEASES, verb, "create".equals(verb) ? null : leaseName);
  }

  /** Whether creating core Events is allowed (the leadership Events). */
  boolean allowsEvents() {
    return allows("", "events", "create", null);
  }

  /** Whether one rule allows the request; {@code name} is {@code null} for a request without one. */
  boolean allows(String group, String resource, String verb, String name) {
    for (ResourceRule rule : rules) {
      if (lists(rule.getVerbs(), verb) && lists(rule.getApiGroups(), group) && lists(rule.getResources(), resource)
          && names(rule.getResourceNames(), name)) {
        return true;
      }
    }
    return false;
  }

  private static boolean lists(List<String> values, String wanted) {
    return values != null && (values.contains("*") || values.contains(wanted));
  }

  private static boolean names(List<String> names, String name) {
    return names == null || names.isEmpty() || (name != null && !name.isEmpty() && names.contains(name));
  }

  @Override
  public String toString() {
    return "LeaseRules" + rules;
  }
}
