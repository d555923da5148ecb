package io.github.electionpolicy.examples;

import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads options and their values off the command line, one at a time, failing with the option's name. */
final class CommandLine {

  private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s|m)");
  static final String DURATION_FORMAT = "a whole number followed by ms, s or m, e.g. 1500ms, 2s or 1m";

  private final String[] args;
  private int next;

  CommandLine(String[] args) {
    this.args = args.clone();
  }

  boolean hasNext() {
    return next < args.length;
  }

  String nextOption() {
    return args[next++];
  }

  /** The value after {@code option}, which must be there and must not look like another option. */
  String value(String option, String accepted) {
    if (next >= args.length || args[next].startsWith("--")) {
      throw new InvalidOptionException(option, null, accepted, "write " + option + " followed by a value");
    }
    return args[next++];
  }

  /** A file path; a leading {@code ~/} means the home directory, since no shell expands it inside -D options. */
  Path path(String option, String accepted) {
    String text = value(option, accepted);
    return text.startsWith("~/") ? Path.of(System.getProperty("user.home"), text.substring(2)) : Path.of(text);
  }

  Duration duration(String option) {
    String text = value(option, DURATION_FORMAT);
    Matcher m = DURATION.matcher(text.trim());
    if (!m.matches()) {
      throw new InvalidOptionException(option, text, DURATION_FORMAT, "write the duration with its unit");
    }
    long amount = Long.parseLong(m.group(1));
    switch (m.group(2)) {
      case "ms":
        return Duration.ofMillis(amount);
      case "s":
        return Duration.ofSeconds(amount);
      default:
        return Duration.ofMinutes(amount);
    }
  }

  int integer(String option, int min, int max) {
    String accepted = "a whole number from " + min + " to " + max;
    String text = value(option, accepted);
    int parsed;
    try {
      parsed = Integer.parseInt(text.trim());
    } catch (NumberFormatException e) {
      throw new InvalidOptionException(option, text, accepted, "write a number, e.g. " + option + " 3");
    }
    if (parsed < min || parsed > max) {
      throw new InvalidOptionException(option, text, accepted, "pick a number in that range");
    }
    return parsed;
  }

  static InvalidOptionException unknown(String option, String known) {
    return new InvalidOptionException("option", option, known, "run with --help for the usage");
  }
}
