package io.github.electionpolicy.testkit;

import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.Substrate;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * An environment whose kill switch holds a value the library must reject, so that start-up fails with an
 * {@link InvalidElectionSettingException} naming the variable and the value.
 *
 * <p>{@link ElectionArbitraries#invalidKillSwitchScenarios()} generates them; with the testkit on the test
 * class path jqwik also generates them for a {@code @ForAll InvalidKillSwitchScenario} parameter:
 *
 * <pre>{@code
 * @Property
 * void typoStopsStartUp(@ForAll InvalidKillSwitchScenario scenario) {
 *   assertThatThrownBy(() -> scenario.policy().decide(scenario.environment(), scenario.substrate()))
 *       .isInstanceOf(InvalidElectionSettingException.class)
 *       .hasMessageContaining(scenario.killSwitchVariable());
 * }
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 *
 * @param killSwitchVariable the name of the variable the controller reads as its kill switch
 * @param invalidValue the rejected value, exactly as set in {@link #variables()}
 * @param variables the whole environment, sorted by name and unmodifiable
 * @param substrate the substrate
 */
public record InvalidKillSwitchScenario(
    String killSwitchVariable, String invalidValue, Map<String, String> variables, Substrate substrate) {

  /**
   * Validates the components and copies the variables.
   *
   * @param killSwitchVariable the kill-switch variable's name
   * @param invalidValue the rejected value
   * @param variables the environment variables; copied
   * @param substrate the substrate
   * @throws NullPointerException if a component, a variable name or a value is {@code null}
   * @throws IllegalArgumentException if the variables do not set the kill switch to {@code invalidValue}
   */
  public InvalidKillSwitchScenario {
    Objects.requireNonNull(killSwitchVariable, "killSwitchVariable");
    Objects.requireNonNull(invalidValue, "invalidValue");
    Objects.requireNonNull(substrate, "substrate");
    variables = Collections.unmodifiableMap(new TreeMap<>(Map.copyOf(variables)));
    if (!invalidValue.equals(variables.get(killSwitchVariable))) {
      throw new IllegalArgumentException(killSwitchVariable + "="
          + (variables.containsKey(killSwitchVariable) ? Render.quote(variables.get(killSwitchVariable)) : "<unset>")
          + " is not valid: accepted values are the scenario's invalid value " + Render.quote(invalidValue)
          + "; fix: put the invalid value into the variables");
    }
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
   * Describes the scenario for a failure message.
   *
   * @return a multi-line description
   */
  public String describe() {
    return "kill switch: " + killSwitchVariable + "=" + Render.quote(invalidValue) + " (not an accepted value)\n"
        + "environment: " + Render.variables(variables) + "\n"
        + "substrate:   " + substrate;
  }

  @Override
  public String toString() {
    return "InvalidKillSwitchScenario[" + killSwitchVariable + "=" + Render.quote(invalidValue)
        + ", environment " + Render.variables(variables) + ", substrate " + substrate + "]";
  }
}
