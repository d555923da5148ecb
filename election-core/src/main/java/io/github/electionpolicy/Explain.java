package io.github.electionpolicy;

import java.io.PrintStream;
import java.util.Objects;

/**
 * A command-line tool for operators: decides for this process's environment and prints the outcome,
 * every reason, every warning and the summary. It only reads the environment.
 *
 * <pre>{@code
 * java -cp election-core.jar io.github.electionpolicy.Explain --substrate kubernetes --uses-kubernetes-api
 * }</pre>
 *
 * <p>Options: {@code --substrate NAME} (default {@code direct}), {@code --uses-kubernetes-api} (default: the
 * substrate does not), {@code --kill-switch-variable NAME} (default {@value
 * ElectionPolicy#DEFAULT_KILL_SWITCH_VARIABLE}), {@code --help}. Exit status: 0 when a decision was made, 2
 * when a setting or an option is invalid, with the reason on standard error.
 *
 * <p>Stateless and thread-safe.
 */
public final class Explain {

  /** Exit status when a decision was made. */
  public static final int EXIT_DECIDED = 0;
  /** Exit status when a setting or a command-line option is invalid. */
  public static final int EXIT_INVALID = 2;

  private static final String USAGE =
      "usage: explain [--substrate NAME] [--uses-kubernetes-api] [--kill-switch-variable NAME]";

  private Explain() {}

  /**
   * Runs the tool against the process environment and exits with its status.
   *
   * @param args the command-line options
   */
  public static void main(String[] args) {
    int status = run(args, Environment.system(), System.out, System.err);
    System.out.flush();
    System.exit(status);
  }

  /**
   * Runs the tool without exiting, for tests and for embedding in other tools.
   *
   * @param args the command-line options
   * @param environment the environment to decide for
   * @param out where the explanation goes
   * @param err where errors go
   * @return {@link #EXIT_DECIDED} or {@link #EXIT_INVALID}
   */
  public static int run(String[] args, Environment environment, PrintStream out, PrintStream err) {
    Objects.requireNonNull(args, "args");
    Objects.requireNonNull(environment, "environment");
    Objects.requireNonNull(out, "out");
    Objects.requireNonNull(err, "err");
    String substrateName = "direct";
    boolean usesKubernetesApi = false;
    ElectionPolicy.Builder policy = ElectionPolicy.builder();
    try {
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--substrate" -> substrateName = value(args, ++i, "--substrate");
          case "--uses-kubernetes-api" -> usesKubernetesApi = true;
          case "--kill-switch-variable" ->
              policy.killSwitchVariable(value(args, ++i, "--kill-switch-variable"));
          case "--help", "-h" -> {
            out.println(USAGE);
            return EXIT_DECIDED;
          }
          default -> throw new IllegalArgumentException("unknown option " + Text.quote(args[i]));
        }
      }
      ElectionDecision decision = policy.build().decide(environment, Substrate.of(substrateName, usesKubernetesApi));
      print(decision, out);
      return EXIT_DECIDED;
    } catch (IllegalArgumentException e) {
      err.println("explain: " + e.getMessage());
      if (!(e instanceof InvalidElectionSettingException)) {
        err.println(USAGE);
      }
      return EXIT_INVALID;
    }
  }

  private static String value(String[] args, int index, String option) {
    if (index >= args.length) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[index];
  }

  private static void print(ElectionDecision decision, PrintStream out) {
    out.println("outcome:     " + decision.outcome());
    out.println("kill switch: " + decision.killSwitch().describe() + " -> " + decision.killSwitch().state());
    out.println("host:        " + decision.processHost().kind() + " ("
        + ProcessHost.SERVICE_HOST_VARIABLE + "=" + decision.processHost().serviceHost().map(Text::quote)
        .orElse("<unset>") + ", " + ProcessHost.SERVICE_PORT_VARIABLE + "="
        + decision.processHost().servicePort().map(Text::quote).orElse("<unset>") + ")");
    out.println("substrate:   " + decision.substrate());
    for (ElectionDecision.Reason reason : decision.reasons()) {
      out.println("reason:      " + reason);
    }
    for (String warning : decision.warnings()) {
      out.println("warning:     " + warning);
    }
    out.println("summary:     " + decision.summary());
  }
}
