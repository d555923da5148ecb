package io.github.electionpolicy.examples;

import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.github.electionpolicy.fabric8.LeaseAccessDeniedException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whether this process may use the Lease, asked the way the adapter's RBAC preflight asks it: one
 * SelfSubjectAccessReview per verb in {@link LeaseAccessDeniedException#REQUIRED_VERBS} on {@code
 * coordination.k8s.io} leases in the namespace, by name except for create (RBAC cannot restrict create by
 * name), then one for watch, which is advice only. It gives the same verdict as the preflight, which stops
 * the adapter on a denied verb and contends anyway when the review API gives no verdict; the preflight itself
 * is package-private in election-fabric8, so this repeats its questions rather than calling it.
 *
 * <p>A review is not stored by the server and changes nothing; this never touches the Lease.
 */
final class LeaseAccessReview {

  private LeaseAccessReview() {}

  /** What the reviews found. */
  enum Kind {
    /** Every required verb is allowed. */
    GRANTED,
    /** At least one required verb is denied: the adapter refuses to start. */
    DENIED,
    /** The review API gave no verdict or failed: the adapter warns and contends anyway. */
    UNKNOWN
  }

  /**
   * The verdict.
   *
   * @param kind granted, denied or unknown
   * @param verdict one line for the output, starting with the verdict
   * @param roleYaml for a denial, the Role that grants what is missing
   */
  record Verdict(Kind kind, String verdict, Optional<String> roleYaml) {}

  static Verdict review(KubernetesClient client, String namespace, String leaseName) {
    List<String> missing = new ArrayList<>();
    for (String verb : LeaseAccessDeniedException.REQUIRED_VERBS) {
      Optional<Boolean> allowed;
      try {
        allowed = allowed(client, namespace, leaseName, verb);
      } catch (KubernetesClientException e) {
        return unknown("the SelfSubjectAccessReview for \"" + verb + "\" failed: "
            + ApiServerCheck.describe(e));
      }
      if (allowed.isEmpty()) {
        return unknown("the SelfSubjectAccessReview for \"" + verb + "\" came back without a verdict");
      }
      if (!allowed.get()) {
        missing.add(verb);
      }
    }
    String where = "leases (coordination.k8s.io) in namespace \"" + namespace + "\"";
    if (!missing.isEmpty()) {
      return new Verdict(Kind.DENIED, "DENIED: may not " + String.join(", ", missing) + " " + where
          + "; the adapter would refuse to start. A Role that grants what it needs:",
          Optional.of(LeaseAccessDeniedException.roleYaml(namespace, leaseName)));
    }
    Optional<Boolean> watch;
    try {
      watch = allowed(client, namespace, leaseName, "watch");
    } catch (KubernetesClientException e) {
      watch = Optional.empty();
    }
    String granted = "granted: " + String.join(", ", LeaseAccessDeniedException.REQUIRED_VERBS) + " on " + where;
    return new Verdict(Kind.GRANTED, watch.orElse(true) ? granted
        : granted + "; watch is not, so followers notice a released Lease only at their next poll",
        Optional.empty());
  }

  private static Verdict unknown(String why) {
    return new Verdict(Kind.UNKNOWN, "could not be checked: " + why
        + "; the adapter would warn and contend anyway", Optional.empty());
  }

  private static Optional<Boolean> allowed(KubernetesClient client, String namespace, String leaseName,
      String verb) {
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
    SelfSubjectAccessReview answer = client.authorization().v1().selfSubjectAccessReview().create(review);
    if (answer == null || answer.getStatus() == null) {
      return Optional.empty();
    }
    return Optional.ofNullable(answer.getStatus().getAllowed());
  }
}
