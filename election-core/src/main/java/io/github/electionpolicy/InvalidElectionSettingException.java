package io.github.electionpolicy;

import java.util.Objects;

/**
 * Thrown when a setting that drives leader election has a value the library will not guess about.
 *
 * <p>The message always has the form {@code SETTING="VALUE" is not valid: accepted values are ...; fix:
 * ...}, so that a start-up failure tells the operator what to change. The setting's name and the
 * rejected value are also available to code through {@link #setting()} and {@link #value()}.
 *
 * <p>Instances are immutable and thread-safe.
 */
public class InvalidElectionSettingException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /** The setting's name, e.g. an environment variable or a builder property. */
  private final String setting;
  /** The rejected value as given, or {@code null} when none was given. */
  private final String value;

  /**
   * Creates an exception for a rejected setting.
   *
   * @param setting the setting's name, e.g. {@code LEADER_ELECTION_ENABLED} or {@code leaseDuration}
   * @param value the rejected value as given; {@code null} when the value was missing
   * @param accepted what would be accepted, e.g. {@code "true, 1, yes, on"}
   * @param fix what the operator should do, e.g. {@code "set it to one of the accepted values"}
   */
  public InvalidElectionSettingException(String setting, String value, String accepted, String fix) {
    super(message(setting, value, accepted, fix));
    this.setting = setting;
    this.value = value;
  }

  private static String message(String setting, String value, String accepted, String fix) {
    Objects.requireNonNull(setting, "setting");
    Objects.requireNonNull(accepted, "accepted");
    Objects.requireNonNull(fix, "fix");
    String shown = value == null ? "<missing>" : Text.quote(value);
    return setting + "=" + shown + " is not valid: accepted values are " + accepted + "; fix: " + fix;
  }

  /**
   * Returns the name of the rejected setting.
   *
   * @return the setting's name, never {@code null}
   */
  public String setting() {
    return setting;
  }

  /**
   * Returns the rejected value exactly as it was given.
   *
   * @return the value, or {@code null} when the setting was missing
   */
  public String value() {
    return value;
  }
}
