package io.github.electionpolicy.testkit;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.KillSwitch;
import io.github.electionpolicy.ProcessHost;
import io.github.electionpolicy.Substrate;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One concrete way of realising a row of the {@link TruthTable}: the row, the name of the kill-switch
 * variable, the environment variables that spell the row's inputs, and the substrate.
 *
 * <p>{@link ElectionArbitraries#scenarios()} generates scenarios in many spellings; {@link
 * #canonical(TruthTable.Row, String)} gives the plainest one. With the testkit on the test class path,
 * jqwik generates them for a {@code @ForAll Scenario} parameter:
 *
 * <pre>{@code
 * @Property
 * void decisionFollowsTheTable(@ForAll Scenario scenario) {
 *   ElectionDecision decision = scenario.decide();
 *   assertThat(decision.outcome()).isEqualTo(scenario.row().outcome());
 * }
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 *
 * @param row the row of the table the variables and the substrate realise
 * @param killSwitchVariable the name of the variable the controller reads as its kill switch
 * @param variables the environment, sorted by name and unmodifiable
 * @param substrate the substrate; its capability matches the row
 */
public record Scenario(
    TruthTable.Row row, String killSwitchVariable, Map<String, String> variables, Substrate substrate) {

  /** The service host that {@link #canonical(TruthTable.Row, String)} sets for a pod. */
  static final String CANONICAL_SERVICE_HOST = "10.96.0.1";
  /** The service port that {@link #canonical(TruthTable.Row, String)} sets for a pod. */
  static final String CANONICAL_SERVICE_PORT = "443";

  /**
   * Validates the components and copies the variables.
   *
   * @param row the row
   * @param killSwitchVariable the kill-switch variable's name
   * @param variables the environment variables; copied
   * @param substrate the substrate
   * @throws NullPointerException if a component, a variable name or a value is {@code null}
   * @throws IllegalArgumentException if the substrate's capability is not the row's
   */
  public Scenario {
    Objects.requireNonNull(row, "row");
    Objects.requireNonNull(killSwitchVariable, "killSwitchVariable");
    Objects.requireNonNull(substrate, "substrate");
    variables = Collections.unmodifiableMap(new TreeMap<>(Map.copyOf(variables)));
    if (substrate.usesKubernetesApi() != row.substrateUsesKubernetesApi()) {
      throw new IllegalArgumentException("substrate=" + substrate + " is not valid for " + row.describeInputs()
          + ": accepted values are substrates with usesKubernetesApi=" + row.substrateUsesKubernetesApi()
          + "; fix: pass a substrate that matches the row");
    }
  }

  /**
   * Returns the plainest scenario for a row: the kill switch unset (election on) or {@code "false"}
   * (election off); {@value #CANONICAL_SERVICE_HOST}:{@value #CANONICAL_SERVICE_PORT} for a pod and no
   * service variable outside one; substrate {@code "kubernetes"} or {@code "direct"}.
   *
   * @param row the row to realise
   * @param killSwitchVariable the name of the kill-switch variable
   * @return the canonical scenario
   */
  public static Scenario canonical(TruthTable.Row row, String killSwitchVariable) {
    Objects.requireNonNull(row, "row");
    Objects.requireNonNull(killSwitchVariable, "killSwitchVariable");
    Map<String, String> variables = new TreeMap<>();
    if (row.killSwitch() == KillSwitch.State.ELECTION_OFF) {
      variables.put(killSwitchVariable, "false");
    }
    if (row.processHost() == ProcessHost.Kind.KUBERNETES_POD) {
      variables.put(ProcessHost.SERVICE_HOST_VARIABLE, CANONICAL_SERVICE_HOST);
      variables.put(ProcessHost.SERVICE_PORT_VARIABLE, CANONICAL_SERVICE_PORT);
    }
    Substrate substrate = row.substrateUsesKubernetesApi()
        ? Substrate.usingKubernetesApi("kubernetes")
        : Substrate.withoutKubernetesApi("direct");
    return new Scenario(row, killSwitchVariable, variables, substrate);
  }

  /**
   * Returns the plainest scenario for a row with the default kill-switch variable, {@value
   * ElectionPolicy#DEFAULT_KILL_SWITCH_VARIABLE}.
   *
   * @param row the row to realise
   * @return the canonical scenario
   */
  public static Scenario canonical(TruthTable.Row row) {
    return canonical(row, ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE);
  }

  /**
   * Returns the variables as an {@link Environment}.
   *
   * @return an immutable environment holding exactly {@link #variables()}
   */
  public Environment environment() {
    return Environment.of(variables);
  }

  /**
   * Returns the policy that reads {@link #killSwitchVariable()} as its kill switch.
   *
   * @return the policy
   */
  public ElectionPolicy policy() {
    return ElectionPolicy.builder().killSwitchVariable(killSwitchVariable).build();
  }

  /**
   * Lets the library decide for this scenario.
   *
   * @return {@code policy().decide(environment(), substrate())}
   */
  public ElectionDecision decide() {
    return policy().decide(environment(), substrate);
  }

  /**
   * Returns the same scenario with more variables, for example unrelated noise. The extra variables must
   * not name the kill switch or a service variable, since those would change what the scenario realises.
   *
   * @param extra the variables to add
   * @return a scenario for the same row with the union of the variables
   * @throws IllegalArgumentException if {@code extra} names the kill-switch variable, a service variable, or
   *     a variable the scenario already has
   */
  public Scenario withExtraVariables(Map<String, String> extra) {
    Objects.requireNonNull(extra, "extra");
    Map<String, String> union = new TreeMap<>(variables);
    for (Map.Entry<String, String> variable : extra.entrySet()) {
      String name = variable.getKey();
      if (name.equals(killSwitchVariable) || name.equals(ProcessHost.SERVICE_HOST_VARIABLE)
          || name.equals(ProcessHost.SERVICE_PORT_VARIABLE) || variables.containsKey(name)) {
        throw new IllegalArgumentException(name + "=" + Render.quote(variable.getValue())
            + " is not valid as an extra variable: accepted values are variables the decision does not read"
            + " and the scenario does not set; fix: leave out " + name);
      }
      union.put(name, variable.getValue());
    }
    return new Scenario(row, killSwitchVariable, union, substrate);
  }

  /**
   * Describes the scenario for a failure message: the row, the environment with quoted values, the
   * substrate and the kill-switch variable.
   *
   * @return a multi-line description
   */
  public String describe() {
    return "row:         " + row.describeInputs() + "\n"
        + "environment: " + Render.variables(variables) + "\n"
        + "substrate:   " + substrate + "\n"
        + "kill switch: read from " + killSwitchVariable;
  }

  @Override
  public String toString() {
    return "Scenario[" + row.describeInputs() + ", environment " + Render.variables(variables)
        + ", substrate " + substrate + ", kill switch " + killSwitchVariable + "]";
  }
}
