package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReviewBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 *
 * <p>The preflight sends the question as a fixed JSON body ({@link #questionJson}) and reads the answer untyped
 * ({@link #parse}): fabric8's typed model of the review is what made it slow in a fresh JVM (Jackson builds its
 * serializers and deserializers at the first use, 90-200 ms on 2 cores against 10-20 ms for the same request sent
 * and read raw), and the first election waits for this answer. The typed {@link #of} and {@link #question} are for
 * tests that build answers.
 */
final class LeaseRules {

  static final String LEASE_GROUP = "coordination.k8s.io";
  static final String LEASES = "leases";

  /** The path of the review, below the server's root URL. */
  static final String PATH = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";

  /** One resource rule: each list as the server wrote it, empty when it wrote none. */
  record Rule(List<String> apiGroups, List<String> resources, List<String> resourceNames, List<String> verbs) {
    Rule {
      apiGroups = List.copyOf(apiGroups);
      resources = List.copyOf(resources);
      resourceNames = List.copyOf(resourceNames);
      verbs = List.copyOf(verbs);
    }
  }

  private final List<Rule> rules;

  private LeaseRules(List<Rule> rules) {
    this.rules = List.copyOf(rules);
  }

  /**
   * The question as the preflight sends it: the rules of this identity in {@code namespace}, a valid namespace name
   * (a DNS label, so nothing in it needs escaping in JSON).
   */
  static String questionJson(String namespace) {
    return "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectRulesReview\","
        + "\"spec\":{\"namespace\":\"" + namespace + "\"}}";
  }

  /**
   * The rules of an answer read untyped (JSON objects as maps, arrays as lists); none when it carries no status or
   * no resource rules. What is not a list of strings where one is expected counts as an empty list, so a rule the
   * answer garbles allows nothing it would not have allowed whole.
   */
  static LeaseRules parse(Map<?, ?> answer) {
    List<Rule> rules = new ArrayList<>();
    if (answer != null && answer.get("status") instanceof Map<?, ?> status
        && status.get("resourceRules") instanceof List<?> listed) {
      for (Object entry : listed) {
        if (entry instanceof Map<?, ?> rule) {
          rules.add(new Rule(strings(rule.get("apiGroups")), strings(rule.get("resources")),
              strings(rule.get("resourceNames")), strings(rule.get("verbs"))));
        }
      }
    }
    return new LeaseRules(rules);
  }

  private static List<String> strings(Object value) {
    if (!(value instanceof List<?> values)) {
      return List.of();
    }
    List<String> strings = new ArrayList<>(values.size());
    for (Object v : values) {
      if (!(v instanceof String string)) {
        return List.of();
      }
      strings.add(string);
    }
    return strings;
  }

  /** The rules of a typed answer; none when it carries no status. For tests that build answers. */
  static LeaseRules of(SelfSubjectRulesReview answer) {
    if (answer == null || answer.getStatus() == null || answer.getStatus().getResourceRules() == null) {
      return new LeaseRules(List.of());
    }
    return new LeaseRules(answer.getStatus().getResourceRules().stream().filter(Objects::nonNull)
        .map(rule -> new Rule(orEmpty(rule.getApiGroups()), orEmpty(rule.getResources()),
            orEmpty(rule.getResourceNames()), orEmpty(rule.getVerbs())))
        .toList());
  }

  private static List<String> orEmpty(List<String> values) {
    return values == null ? List.of() : values.stream().filter(Objects::nonNull).toList();
  }

  /** The question, typed: the rules of this identity in {@code namespace}. For tests that build answers. */
  static SelfSubjectRulesReview question(String namespace) {
    return new SelfSubjectRulesReviewBuilder().withNewSpec().withNamespace(namespace).endSpec().build();
  }

  /** The rules, in the answer's order; for tests. */
  List<Rule> rules() {
    return rules;
  }

  /** Whether every verb leader election needs on the Lease ({@link LeaseAccess#REQUIRED_VERBS}) is allowed. */
  boolean grantRequired(String leaseName) {
    return grant(LeaseNeeds.election().required(), leaseName);
  }

  /** Whether every one of {@code asks} (a runner's {@link LeaseNeeds}) is allowed, for the Lease {@code leaseName}. */
  boolean grant(java.util.List<LeaseNeeds.Ask> asks, String leaseName) {
    for (LeaseNeeds.Ask ask : asks) {
      if (!allows(ask, leaseName)) {
        return false;
      }
    }
    return true;
  }

  /** Whether one question is allowed: its verb on the Lease by name, or on every Lease of the namespace. */
  boolean allows(LeaseNeeds.Ask ask, String leaseName) {
    return allows(LEASE_GROUP, LEASES, ask.verb(), ask.name(leaseName));
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
    for (Rule rule : rules) {
      if (lists(rule.verbs(), verb) && lists(rule.apiGroups(), group) && lists(rule.resources(), resource)
          && names(rule.resourceNames(), name)) {
        return true;
      }
    }
    return false;
  }

  private static boolean lists(List<String> values, String wanted) {
    return values.contains("*") || values.contains(wanted);
  }

  private static boolean names(List<String> names, String name) {
    return names.isEmpty() || (name != null && !name.isEmpty() && names.contains(name));
  }

  @Override
  public String toString() {
    return "LeaseRules" + rules;
  }
}
