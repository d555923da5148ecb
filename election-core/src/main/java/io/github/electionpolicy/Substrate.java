package io.github.electionpolicy;

import java.util.Objects;

/**
 * The infrastructure a controller runs its work on, and the one fact about it that matters here:
 * whether it uses the Kubernetes API.
 *
 * <p>A substrate is supplied by the controller, not detected: the controller knows whether its work
 * creates pods, jobs or other Kubernetes objects ({@code Substrate.usingKubernetesApi("kubernetes")}) or runs
 * directly on the host ({@code Substrate.withoutKubernetesApi("direct")}). A substrate that uses the Kubernetes
 * API makes the process contend for the Lease even outside a pod, because two replicas would otherwise
 * both write to the same cluster.
 *
 * <p>Instances are immutable values and thread-safe.
 *
 * @param name a short, non-blank name for logs and summaries, e.g. {@code "kubernetes"}
 * @param usesKubernetesApi whether the substrate reads or writes through the Kubernetes API
 */
public record Substrate(String name, boolean usesKubernetesApi) {

  /**
   * Validates the substrate's name.
   *
   * @param name a short, non-blank name
   * @param usesKubernetesApi whether the substrate uses the Kubernetes API
   * @throws NullPointerException if {@code name} is {@code null}
   * @throws IllegalArgumentException if {@code name} is empty or blank
   */
  public Substrate {
    Objects.requireNonNull(name, "substrate name must not be null: name the substrate, e.g. \"direct\"");
    if (name.isBlank()) {
      throw new InvalidElectionSettingException(
          "substrate name", name, "any non-blank name, e.g. \"kubernetes\" or \"direct\"",
          "pass the name of the substrate the controller runs its work on");
    }
  }

  /**
   * A substrate whose work reads or writes through the Kubernetes API (pods, jobs, custom resources): the
   * process contends for the Lease even outside a pod, since two replicas would both write to one cluster.
   *
   * @param name a short, non-blank name, e.g. {@code "kubernetes"}
   * @return the substrate
   * @throws NullPointerException if {@code name} is {@code null}
   * @throws IllegalArgumentException if {@code name} is empty or blank
   */
  public static Substrate usingKubernetesApi(String name) {
    return new Substrate(name, true);
  }

  /**
   * A substrate whose work does not touch the Kubernetes API (it runs on the host, or talks to other
   * systems): outside a pod the process runs unelected.
   *
   * @param name a short, non-blank name, e.g. {@code "direct"}
   * @return the substrate
   * @throws NullPointerException if {@code name} is {@code null}
   * @throws IllegalArgumentException if {@code name} is empty or blank
   */
  public static Substrate withoutKubernetesApi(String name) {
    return new Substrate(name, false);
  }

  /**
   * Returns a substrate; {@link #usingKubernetesApi(String)} and {@link #withoutKubernetesApi(String)} read
   * better at a call site that knows which it is.
   *
   * @param name a short, non-blank name, e.g. {@code "kubernetes"} or {@code "direct"}
   * @param usesKubernetesApi whether the substrate reads or writes through the Kubernetes API
   * @return the substrate
   * @throws NullPointerException if {@code name} is {@code null}
   * @throws IllegalArgumentException if {@code name} is empty or blank
   */
  public static Substrate of(String name, boolean usesKubernetesApi) {
    return new Substrate(name, usesKubernetesApi);
  }

  @Override
  public String toString() {
    return name + (usesKubernetesApi ? " (uses the Kubernetes API)" : " (no Kubernetes API)");
  }
}
