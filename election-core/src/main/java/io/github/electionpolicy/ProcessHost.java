package io.github.electionpolicy;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Where the process runs, as the Kubernetes clients judge it: in a pod exactly when both {@value
 * #SERVICE_HOST_VARIABLE} and {@value #SERVICE_PORT_VARIABLE} are set and not blank.
 *
 * <p>This is client-go's in-cluster rule, under which an empty value counts as unset. The values are not
 * otherwise validated: an IPv6 host or an unusual port is the cluster's business. When exactly one of the
 * two is usable, the host is not a pod and {@link #warnings()} names the variable that is missing or blank,
 * because a half-set environment is usually a mistake in a manifest.
 *
 * <p>Instances are immutable values and thread-safe.
 *
 * @param serviceHost the value of {@value #SERVICE_HOST_VARIABLE} as set, or empty when unset
 * @param servicePort the value of {@value #SERVICE_PORT_VARIABLE} as set, or empty when unset
 */
public record ProcessHost(Optional<String> serviceHost, Optional<String> servicePort) {

  /** The variable Kubernetes sets in every pod to the API server's service host. */
  public static final String SERVICE_HOST_VARIABLE = "KUBERNETES_SERVICE_HOST";
  /** The variable Kubernetes sets in every pod to the API server's service port. */
  public static final String SERVICE_PORT_VARIABLE = "KUBERNETES_SERVICE_PORT";

  /** The kind of host, the dimension of the decision. */
  public enum Kind {
    /** Both service variables are usable: the process runs in a Kubernetes pod. */
    KUBERNETES_POD,
    /** At least one service variable is unset or blank: the process runs outside a pod. */
    OUTSIDE_POD
  }

  /**
   * Validates the components.
   *
   * @param serviceHost the service host as set, or empty
   * @param servicePort the service port as set, or empty
   * @throws NullPointerException if a component is {@code null}
   */
  public ProcessHost {
    Objects.requireNonNull(serviceHost, "serviceHost");
    Objects.requireNonNull(servicePort, "servicePort");
  }

  /**
   * Detects the process host from an environment.
   *
   * @param environment where to read the two service variables
   * @return the host as detected
   */
  public static ProcessHost detect(Environment environment) {
    Objects.requireNonNull(environment, "environment");
    return new ProcessHost(
        environment.get(SERVICE_HOST_VARIABLE), environment.get(SERVICE_PORT_VARIABLE));
  }

  /**
   * Returns the kind of host.
   *
   * @return {@link Kind#KUBERNETES_POD} when both variables are usable, else {@link Kind#OUTSIDE_POD}
   */
  public Kind kind() {
    return usable(serviceHost) && usable(servicePort) ? Kind.KUBERNETES_POD : Kind.OUTSIDE_POD;
  }

  /**
   * Tells whether the process runs in a Kubernetes pod.
   *
   * @return {@code true} when {@link #kind()} is {@link Kind#KUBERNETES_POD}
   */
  public boolean isPod() {
    return kind() == Kind.KUBERNETES_POD;
  }

  /**
   * Returns one warning when exactly one of the two variables is usable, naming the one that is not.
   *
   * @return an empty list, or a list with one sentence naming the missing or blank variable
   */
  public List<String> warnings() {
    boolean host = usable(serviceHost);
    boolean port = usable(servicePort);
    if (host == port) {
      return List.of();
    }
    List<String> warnings = new ArrayList<>(1);
    String present = host ? SERVICE_HOST_VARIABLE : SERVICE_PORT_VARIABLE;
    String absent = host ? SERVICE_PORT_VARIABLE : SERVICE_HOST_VARIABLE;
    Optional<String> absentValue = host ? servicePort : serviceHost;
    warnings.add(
        present + " is set but " + absent + (absentValue.isPresent() ? " is blank" : " is not set")
            + ", so the process is treated as running outside a Kubernetes pod; "
            + "a pod has both, so check the manifest or the environment that set only one");
    return List.copyOf(warnings);
  }

  private static boolean usable(Optional<String> value) {
    return value.isPresent() && !value.get().isBlank();
  }
}
