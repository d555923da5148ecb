package io.github.electionpolicy.fabric8;

import java.util.List;

/**
 * What the RBAC preflight found when this process may not use the Lease: the message names the missing verbs
 * and shows the Role rules that grant them. The preflight runs on the election thread after
 * {@link ElectionRunner.Builder#start()} returned, so this is not thrown to the caller: the runner logs it
 * at ERROR, stops before it contends (exiting under the {@code EXIT} loss policy) and returns it from
 * {@link ElectionRunner#startupFailure()}.
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

  /** The verbs leader election needs on {@code leases}: read, create when missing, renew. */
  public static final List<String> REQUIRED_VERBS = List.of("get", "create", "update");

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
    super(message(namespace, leaseName, missingVerbs));
    this.namespace = namespace;
    this.leaseName = leaseName;
    this.missingVerbs = List.copyOf(missingVerbs);
  }

  private static String message(String namespace, String leaseName, List<String> missing) {
    return "leader election may not " + String.join(", ", missing) + " leases (coordination.k8s.io) in "
        + "namespace \"" + namespace + "\": it needs " + String.join(", ", REQUIRED_VERBS)
        + " (and watch, to take over a released Lease at once); fix: bind the pod's service account to a "
        + "Role with these rules, e.g.\n" + roleYaml(namespace, leaseName);
  }

  /**
   * The least-privilege Role that grants what leader election needs, as YAML: {@code create} on leases (RBAC
   * cannot scope create to a name), and {@code get}, {@code update}, {@code watch} on this Lease only. The
   * same rules as {@code docs/rbac.yaml}.
   *
   * @param namespace the namespace of the Lease
   * @param leaseName the name of the Lease, used in the Role's name and its resourceNames
   * @return a Role manifest
   */
  public static String roleYaml(String namespace, String leaseName) {
    return "apiVersion: rbac.authorization.k8s.io/v1\n"
        + "kind: Role\n"
        + "metadata:\n"
        + "  name: " + leaseName + "-leader-election\n"
        + "  namespace: " + namespace + "\n"
        + "rules:\n"
        + "  - apiGroups: [\"coordination.k8s.io\"]\n"
        + "    resources: [\"leases\"]\n"
        + "    verbs: [\"create\"]\n"
        + "  - apiGroups: [\"coordination.k8s.io\"]\n"
        + "    resources: [\"leases\"]\n"
        + "    resourceNames: [\"" + leaseName + "\"]\n"
        + "    verbs: [\"get\", \"update\", \"watch\"]\n";
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
