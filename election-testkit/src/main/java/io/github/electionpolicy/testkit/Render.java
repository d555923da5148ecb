package io.github.electionpolicy.testkit;

import java.util.Map;
import java.util.stream.Collectors;

/** How the testkit shows environments and values in failure messages. Stateless. */
final class Render {
  private Render() {}

  /**
   * Quotes a value so that blanks, tabs and line breaks stay visible: a kill switch of {@code " on\t"} must
   * not read as {@code on} in a failure message. Like the core's log quoting, but also shows every
   * whitespace character other than a plain space as an escape, because here the blanks are the point.
   */
  static String quote(String value) {
    StringBuilder quoted = new StringBuilder(value.length() + 2).append('"');
    value.chars().forEach(c -> quoted.append(visible((char) c)));
    return quoted.append('"').toString();
  }

  private static String visible(char c) {
    return switch (c) {
      case '"' -> "\\\"";
      case '\\' -> "\\\\";
      case '\n' -> "\\n";
      case '\r' -> "\\r";
      case '\t' -> "\\t";
      default -> c != ' ' && (Character.isISOControl(c) || Character.isWhitespace(c) || Character.isSpaceChar(c))
          ? String.format("\\u%04x", (int) c)
          : String.valueOf(c);
    };
  }

  /** Shows variables sorted by name with quoted values, e.g. {@code {A="1", B=" "}}. */
  static String variables(Map<String, String> variables) {
    return variables.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .map(e -> e.getKey() + "=" + quote(e.getValue()))
        .collect(Collectors.joining(", ", "{", "}"));
  }
}
