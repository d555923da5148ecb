package io.github.electionpolicy;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Decides whether a controller process contends for its leader Lease. Pure: {@link #decide(Environment,
 * Substrate)} does no I/O beyond the {@link Environment} it is given, and never logs.
 *
 * <pre>{@code
 * ElectionDecision decision = ElectionPolicy.defaults()
 *     .decide(Environment.system(), Substrate.usingKubernetesApi("kubernetes"));
 * DecisionLog.log(decision); // one line: the outcome and every reason
 * }</pre>
 *
 * <p>Instances are immutable and thread-safe; {@link Builder} is not thread-safe.
 */
public final class ElectionPolicy {

  /** The kill-switch variable read unless the builder names another: {@value}. */
  public static final String DEFAULT_KILL_SWITCH_VARIABLE = "LEADER_ELECTION_ENABLED";

  private static final Pattern VARIABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final ElectionPolicy DEFAULTS = new ElectionPolicy(DEFAULT_KILL_SWITCH_VARIABLE);

  private final String killSwitchVariable;

  private ElectionPolicy(String killSwitchVariable) {
    this.killSwitchVariable = killSwitchVariable;
  }

  /**
   * Returns the policy with every default: the kill switch is {@value #DEFAULT_KILL_SWITCH_VARIABLE}.
   *
   * @return the default policy
   */
  public static ElectionPolicy defaults() {
    return DEFAULTS;
  }

  /**
   * Returns a builder that starts from the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns the name of the environment variable read as the kill switch.
   *
   * @return the variable's name
   */
  public String killSwitchVariable() {
    return killSwitchVariable;
  }

  /**
   * Decides whether the process contends for the leader Lease.
   *
   * @param environment the environment to read the kill switch and the pod variables from
   * @param substrate the substrate the controller runs its work on
   * @return the decision, with its inputs, reasons, warnings and summary
   * @throws NullPointerException if an argument is {@code null}
   * @throws InvalidElectionSettingException if the kill switch holds a value that is not accepted (see
   *     {@link KillSwitch#ACCEPTED_VALUES})
   */
  public ElectionDecision decide(Environment environment, Substrate substrate) {
    Objects.requireNonNull(environment, "environment must not be null: use Environment.system()");
    Objects.requireNonNull(substrate, "substrate must not be null: use Substrate.of(name, usesKubernetesApi)");
    return ElectionDecision.of(
        KillSwitch.read(environment, killSwitchVariable), ProcessHost.detect(environment), substrate);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof ElectionPolicy
        && ((ElectionPolicy) other).killSwitchVariable.equals(killSwitchVariable);
  }

  @Override
  public int hashCode() {
    return killSwitchVariable.hashCode();
  }

  @Override
  public String toString() {
    return "ElectionPolicy{killSwitchVariable=" + killSwitchVariable + "}";
  }

  /**
   * Builds an {@link ElectionPolicy}. Each setter validates its argument at once. Not thread-safe.
   */
  public static final class Builder {
    private String killSwitchVariable = DEFAULT_KILL_SWITCH_VARIABLE;

    private Builder() {}

    /**
     * Names the environment variable read as the kill switch.
     *
     * @param variable an environment variable name: letters, digits and underscores, not starting with a
     *     digit; default {@value ElectionPolicy#DEFAULT_KILL_SWITCH_VARIABLE}
     * @return this builder
     * @throws NullPointerException if {@code variable} is {@code null}
     * @throws InvalidElectionSettingException if {@code variable} is blank or not a variable name
     */
    public Builder killSwitchVariable(String variable) {
      Objects.requireNonNull(variable, "killSwitchVariable must not be null");
      if (!VARIABLE_NAME.matcher(variable).matches()) {
        throw new InvalidElectionSettingException(
            "killSwitchVariable",
            variable,
            "an environment variable name of letters, digits and underscores that does not start with a "
                + "digit, e.g. " + DEFAULT_KILL_SWITCH_VARIABLE,
            "pass the name of the variable, not its value, or leave the default");
      }
      this.killSwitchVariable = variable;
      return this;
    }

    /**
     * Builds the policy.
     *
     * @return an immutable policy
     */
    public ElectionPolicy build() {
      return killSwitchVariable.equals(DEFAULT_KILL_SWITCH_VARIABLE)
          ? DEFAULTS
          : new ElectionPolicy(killSwitchVariable);
    }
  }
}
