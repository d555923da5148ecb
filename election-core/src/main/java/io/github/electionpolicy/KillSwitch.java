package io.github.electionpolicy;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The kill switch: an environment variable that can turn leader election off, and is on by default.
 *
 * <p>{@link #read(Environment, String)} applies the one parsing rule of the library: an unset, empty or
 * blank variable leaves election on; otherwise the value is trimmed and compared case-insensitively
 * with {@value #ACCEPTED_VALUES}. Any other value is rejected with an {@link
 * InvalidElectionSettingException}: a typo in a kill switch must stop the process, not be guessed at.
 *
 * <p>Instances are immutable values and thread-safe.
 *
 * @param variable the name of the environment variable that was read
 * @param rawValue the value exactly as it was set, or empty when the variable was not set
 * @param state whether the switch leaves election on or turns it off
 */
public record KillSwitch(String variable, Optional<String> rawValue, State state) {

  /** The values accepted by {@link #read(Environment, String)}, in the order messages list them. */
  public static final String ACCEPTED_VALUES =
      "true, 1, yes, on (election on) or false, 0, no, off (election off), in any case; "
          + "unset, empty or blank leaves election on";

  private static final Set<String> ON = Set.of("true", "1", "yes", "on");
  private static final Set<String> OFF = Set.of("false", "0", "no", "off");

  /** What the kill switch says about leader election. */
  public enum State {
    /** Election is on: the process contends when its host or substrate call for it. The default. */
    ELECTION_ON,
    /** Election is off: the process runs its reconcilers without contending, whatever else holds. */
    ELECTION_OFF
  }

  /**
   * Validates the components.
   *
   * @param variable the name of the environment variable
   * @param rawValue the value as set, or empty when unset
   * @param state the state the value reads as
   * @throws NullPointerException if any component is {@code null}
   * @throws IllegalArgumentException if {@code state} does not follow from {@code rawValue}
   */
  public KillSwitch {
    Objects.requireNonNull(variable, "variable");
    Objects.requireNonNull(rawValue, "rawValue");
    Objects.requireNonNull(state, "state");
    State parsed = parse(variable, rawValue);
    if (parsed != state) {
      throw new IllegalArgumentException(
          "state=" + state + " does not follow from " + variable + "="
              + rawValue.map(Text::quote).orElse("<unset>") + ", which reads as " + parsed);
    }
  }

  /**
   * Reads the kill switch from an environment.
   *
   * @param environment where to read the variable
   * @param variable the variable's name, e.g. {@link ElectionPolicy#DEFAULT_KILL_SWITCH_VARIABLE}
   * @return the kill switch as read
   * @throws InvalidElectionSettingException if the variable holds a value that is neither blank nor one of
   *     {@value #ACCEPTED_VALUES}
   */
  public static KillSwitch read(Environment environment, String variable) {
    Objects.requireNonNull(environment, "environment");
    Objects.requireNonNull(variable, "variable");
    Optional<String> rawValue = environment.get(variable);
    return new KillSwitch(variable, rawValue, parse(variable, rawValue));
  }

  private static State parse(String variable, Optional<String> rawValue) {
    if (rawValue.isEmpty() || rawValue.get().isBlank()) {
      return State.ELECTION_ON;
    }
    String value = rawValue.get().trim().toLowerCase(Locale.ROOT);
    if (ON.contains(value)) {
      return State.ELECTION_ON;
    }
    if (OFF.contains(value)) {
      return State.ELECTION_OFF;
    }
    throw new InvalidElectionSettingException(
        variable,
        rawValue.get(),
        ACCEPTED_VALUES,
        "set " + variable + "=false to run without leader election (one replica only), "
            + "or unset it to contend as usual");
  }

  /**
   * Tells whether the switch leaves leader election on.
   *
   * @return {@code true} when {@link #state()} is {@link State#ELECTION_ON}
   */
  public boolean electionEnabled() {
    return state == State.ELECTION_ON;
  }

  /**
   * Describes the switch for a log line, e.g. {@code LEADER_ELECTION_ENABLED="false"} or {@code
   * LEADER_ELECTION_ENABLED (unset)}.
   *
   * @return the variable and its value as given
   */
  public String describe() {
    return rawValue.map(v -> variable + "=" + Text.quote(v)).orElse(variable + " (unset)");
  }
}
