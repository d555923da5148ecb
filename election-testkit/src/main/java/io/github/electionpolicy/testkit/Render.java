package io.github.electionpolicy.testkit;

import java.util.Map;
import java.util.stream.Collectors;

/** How the testkit shows environments and values in failure messages. Stateless. */
final class Render {
  private Render() {}

  /**
   * Quotes a value so that blanks, tabs and line breaks stay visible: a kill switch of {@code " on\t"} must
   * not read as {@code on} in a failure message.
   */
  static String quote(String value) {
    StringBuilder quoted = new StringBuilder(value.length() + 2).append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '"' -> quoted.append("\\\"");
        case '\\' -> quoted.append("\\\\");
        case '\n' -> quoted.append("\\n");
        case '\r' -> quoted.append("\\r");
        case '\t' -> quoted.append("\\t");
        default -> {
          if (Character.isISOControl(c) || Character.isWhitespace(c) && c != ' ') {
            quoted.append(String.format("\\u%04x", (int) c));
          } else {
            quoted.append(c);
          }
        }
      }
    }
    return quoted.append('"').toString();
  }

  /** Shows variables sorted by name with quoted values, e.g. {@code {A="1", B=" "}}. */
  static String variables(Map<String, String> variables) {
    return variables.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .map(e -> e.getKey() + "=" + quote(e.getValue()))
        .collect(Collectors.joining(", ", "{", "}"));
  }
}
