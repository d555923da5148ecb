package io.github.electionpolicy;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The process environment, as seen by the decision: the one seam through which the library reads
 * environment variables.
 *
 * <p>Production code uses {@link #system()}; tests use {@link #of(Map)} so that every row of the decision
 * can be exercised without touching the real process environment:
 *
 * <pre>{@code
 * Environment env = Environment.of(Map.of(
 *     "KUBERNETES_SERVICE_HOST", "10.96.0.1",
 *     "KUBERNETES_SERVICE_PORT", "443"));
 * ElectionDecision decision = ElectionPolicy.defaults().decide(env, Substrate.withoutKubernetesApi("direct"));
 * }</pre>
 *
 * <p>Implementations must be thread-safe and must not change what they return for a name while a
 * decision is being made. Both factories return thread-safe instances.
 */
@FunctionalInterface
public interface Environment {

  /**
   * Returns the value of an environment variable.
   *
   * @param name the variable's name, never {@code null}
   * @return the value as set (possibly empty or blank), or empty when the variable is not set
   */
  Optional<String> get(String name);

  /**
   * Returns the environment of the running process. This is the only place in the library that reads
   * {@link System#getenv(String)}.
   *
   * @return the process environment; reads are not cached, so they see the environment as it is
   */
  static Environment system() {
    return SystemEnvironment.INSTANCE;
  }

  /**
   * Returns a fixed environment holding a copy of the given variables.
   *
   * @param variables the variables to expose; copied, so later changes to the map are not seen
   * @return an immutable environment
   * @throws NullPointerException if {@code variables} is {@code null} or holds a {@code null} key or value
   */
  static Environment of(Map<String, String> variables) {
    Objects.requireNonNull(variables, "variables must not be null: pass Map.of() for an empty environment");
    return new MapEnvironment(Map.copyOf(variables));
  }
}
