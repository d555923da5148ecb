package io.github.electionpolicy.examples;

/**
 * A command-line option with a value the tools will not guess about. The message has the library's form:
 * {@code --OPTION=VALUE is not valid: accepted values are ...; fix: ...}.
 *
 * <p>Immutable and thread-safe.
 */
public class InvalidOptionException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /** The option, e.g. {@code --replicas}. */
  private final String option;

  /**
   * Creates the exception.
   *
   * @param option the option as written on the command line, e.g. {@code --replicas}
   * @param value the rejected value, or {@code null} when the value was missing
   * @param accepted what would be accepted
   * @param fix what the user should do
   */
  public InvalidOptionException(String option, String value, String accepted, String fix) {
    super(option + (value == null ? " without a value" : "=\"" + value + "\"") + " is not valid: accepted values are "
        + accepted + "; fix: " + fix);
    this.option = option;
  }

  /**
   * The option that was rejected.
   *
   * @return the option as written on the command line
   */
  public String option() {
    return option;
  }
}
