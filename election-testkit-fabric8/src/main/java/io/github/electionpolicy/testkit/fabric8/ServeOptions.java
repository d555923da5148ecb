package io.github.electionpolicy.testkit.fabric8;

import java.nio.file.Path;
import java.util.Objects;
import java.util.regex.Pattern;

/** {@link ServeLeaseApi}'s command line, checked. Immutable. */
record ServeOptions(Path kubeconfig, int port, String namespace) {

  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  static final String USAGE = "usage: ServeLeaseApi --kubeconfig PATH [--port N] [--namespace NAME]";

  ServeOptions {
    Objects.requireNonNull(kubeconfig, "kubeconfig");
    Objects.requireNonNull(namespace, "namespace");
  }

  /** Reads {@code --kubeconfig PATH [--port N] [--namespace NAME]}, in any order. */
  static ServeOptions parse(String... args) {
    Path kubeconfig = null;
    int port = 0;
    String namespace = "default";
    for (int i = 0; i < args.length; i += 2) {
      String option = args[i];
      if (!option.equals("--kubeconfig") && !option.equals("--port") && !option.equals("--namespace")) {
        throw invalid("option", option, "--kubeconfig, --port and --namespace", USAGE);
      }
      if (i + 1 >= args.length) {
        throw invalid(option, null, "a value after the option", "give " + option + " a value; " + USAGE);
      }
      String value = args[i + 1];
      switch (option) {
        case "--kubeconfig":
          if (value.isBlank()) {
            throw invalid(option, value, "a file path", "give the file the kubeconfig is written to");
          }
          kubeconfig = Path.of(value);
          break;
        case "--port":
          port = port(value);
          break;
        default:
          if (!DNS_LABEL.matcher(value).matches()) {
            throw invalid(option, value, "a DNS label (lower-case letters, digits and '-')",
                "use a namespace name such as \"default\"");
          }
          namespace = value;
      }
    }
    if (kubeconfig == null) {
      throw invalid("--kubeconfig", null, "a file path (required)",
          "say where to write the kubeconfig the controllers read; " + USAGE);
    }
    return new ServeOptions(kubeconfig, port, namespace);
  }

  private static int port(String value) {
    try {
      int port = Integer.parseInt(value.trim());
      if (port >= 0 && port <= 65535) {
        return port;
      }
    } catch (NumberFormatException notANumber) {
      // reported below
    }
    throw invalid("--port", value, "0 (a free port, printed as \"port: N\") or a port from 1 to 65535",
        "pass --port 0, or a free port");
  }

  private static IllegalArgumentException invalid(String setting, String value, String accepted, String fix) {
    return new IllegalArgumentException(setting + "=" + (value == null ? "<missing>" : "\"" + value + "\"")
        + " is not valid: accepted values are " + accepted + "; fix: " + fix);
  }
}
