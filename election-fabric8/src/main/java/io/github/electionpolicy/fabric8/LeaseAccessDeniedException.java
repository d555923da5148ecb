package io.github.electionpolicy.fabric8;

import java.util.List;

/**
 * What the RBAC preflight found when this process may not use the Lease: the message names the missing verbs
 * and shows the Role rules that grant them ({@link LeaseAccess#roleYaml(String, String)}). The preflight runs
 * after {@link ElectionRunner.Builder#start()} returned, so this is not thrown to the
 * caller: the runner logs it at ERROR, stops before it contends (exiting under the {@code EXIT} loss policy)
 * and returns it from {@link ElectionRunner#startupFailure()}.
 *
 * <pre>{@code
 * ElectionRunner runner = builder.start();
 * runner.awaitStopped();
 * runner.startupFailure().ifPresent(denied -> {
 *   System.err.println(denied.getMessage());   // shows the Role to apply
 *   System.exit(2);
 * });
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public class LeaseAccessDeniedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** The namespace of the Lease. */
  private final String namespace;
  /** The name of the Lease. */
  private final String leaseName;
  /** The verbs the review denied. */
  private final List<String> missingVerbs;

  /**
   * Creates the exception.
   *
   * @param namespace the namespace of the Lease
   * @param leaseName the name of the Lease
   * @param missingVerbs the verbs the SelfSubjectAccessReview denied
   */
  public LeaseAccessDeniedException(String namespace, String leaseName, List<String> missingVerbs) {
    this(namespace, leaseName, missingVerbs, LeaseNeeds.election());
  }

  /** The denial of a runner with {@code needs}: its message names what that runner needs, and its Role. */
  LeaseAccessDeniedException(String namespace, String leaseName, List<String> missingVerbs, LeaseNeeds needs) {
    super(message(namespace, leaseName, missingVerbs, needs));
    this.namespace = namespace;
    this.leaseName = leaseName;
    this.missingVerbs = List.copyOf(missingVerbs);
  }

  private static String message(String namespace, String leaseName, List<String> missing, LeaseNeeds needs) {
    return "leader election may not " + String.join(", ", missing) + " leases (coordination.k8s.io) in "
        + "namespace \"" + namespace + "\": " + (needs.sharded() ? "a sharded runner" : "it") + " needs "
        + needs.needed() + "; fix: bind the pod's service account to a Role with these rules, e.g.\n"
        + needs.roleYaml(namespace, leaseName);
  }

  /**
   * The namespace of the Lease.
   *
   * @return the namespace
   */
  public String namespace() {
    return namespace;
  }

  /**
   * The name of the Lease.
   *
   * @return the Lease name
   */
  public String leaseName() {
    return leaseName;
  }

  /**
   * The verbs that were denied.
   *
   * @return a non-empty, unmodifiable list
   */
  public List<String> missingVerbs() {
    return missingVerbs;
  }
}
