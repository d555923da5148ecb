package io.github.electionpolicy.examples;

import io.github.electionpolicy.InvalidElectionSettingException;
import java.io.PrintStream;
import java.util.Map;
import java.util.Objects;

/**
 * The one-command demo: by default starts fabric8's mock API server in CRUD mode on localhost and runs three
 * controller replicas in this JVM, each with its own client, the real {@link
 * io.github.electionpolicy.fabric8.ElectionRunner} and a toy reconciler that prints what it does. It
 * prints each replica's decision, who leads, then closes the leader gracefully and measures the take-over,
 * then kills the new leader without release and measures the crash take-over, then shuts everything down.
 *
 * <pre>{@code
 * mvn -B -q install -DskipTests && mvn -B -q -pl election-examples exec:java
 * mvn -B -q -pl election-examples exec:java -Dexample.args="--kill-switch off"
 * }</pre>
 *
 * <p>Options: {@code --replicas N}, {@code --lease-duration D}, {@code --renew-deadline D}, {@code
 * --retry-period D} (durations such as {@code 2s} or {@code 1500ms}), {@code --substrate kubernetes|direct},
 * {@code --kill-switch on|off}, {@code --master URL} or {@code --kubeconfig PATH} to run the same replicas
 * against a real cluster, {@code --namespace NS} there, {@code --help}. Exit status: {@value #EXIT_OK} when
 * the demo ran to its end, {@value #EXIT_FAILED} when it failed (no leader or no take-over in time, access
 * denied, server unreachable), {@value #EXIT_INVALID} on an invalid option.
 *
 * <p>Stateless and thread-safe; each call of {@link #run(String[], PrintStream, PrintStream)} starts its own
 * server and replicas.
 */
public final class Demo {

  /** Exit status when the demo ran to its end. */
  public static final int EXIT_OK = 0;
  /** Exit status when the demo failed; the reason is on standard error. */
  public static final int EXIT_FAILED = 1;
  /** Exit status when an option is invalid. */
  public static final int EXIT_INVALID = 2;

  /** The timing settings of {@code LeaseSettings} and the options that set them. */
  private static final Map<String, String> OPTION_OF_SETTING = Map.of(
      "leaseDuration", "--lease-duration",
      "renewDeadline", "--renew-deadline",
      "retryPeriod", "--retry-period",
      "requestTimeout", "--renew-deadline");

  /** The width of the story's lines, so they fit a terminal. */
  private static final int WIDTH = 100;
  private static final int INDENT = 11;

  private Demo() {}

  /**
   * Runs the demo and exits with its status.
   *
   * @param args the command-line options
   */
  public static void main(String[] args) {
    int status = run(args, System.out, System.err);
    System.out.flush();
    // The embedded server's threads would keep the JVM alive; everything has been closed by now.
    System.exit(status);
  }

  /**
   * Runs the demo without exiting, for tests and for embedding.
   *
   * @param args the command-line options
   * @param out where the demo's story goes
   * @param err where failures and option errors go
   * @return {@link #EXIT_OK}, {@link #EXIT_FAILED} or {@link #EXIT_INVALID}
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    Objects.requireNonNull(args, "args");
    Objects.requireNonNull(out, "out");
    Objects.requireNonNull(err, "err");
    DemoOptions options;
    try {
      options = DemoOptions.parse(args);
      if (options.help()) {
        out.println(DemoOptions.USAGE);
        return EXIT_OK;
      }
      // Checked before anything starts, the timings by the adapter's own rules.
      FailoverScenario.settings(options).identity("check").build();
      if (!options.embedded()) {
        ClusterConnection.of(options.master(), options.kubeconfig());
      }
    } catch (InvalidOptionException e) {
      err.println("demo: " + e.getMessage());
      err.println(DemoOptions.USAGE);
      return EXIT_INVALID;
    } catch (InvalidElectionSettingException e) {
      err.println("demo: " + OPTION_OF_SETTING.getOrDefault(e.setting(), "option") + ": " + e.getMessage());
      return EXIT_INVALID;
    }
    try {
      new FailoverScenario(options, out).run();
      return EXIT_OK;
    } catch (DemoFailedException e) {
      err.println("demo: FAILED: " + e.getMessage());
      return EXIT_FAILED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("demo: interrupted");
      return EXIT_FAILED;
    }
  }

  /** One line of the demo's story: the replica in a column, then what happened. */
  static String line(String replica, String text) {
    return String.format("%-10s %s", replica, text);
  }

  /** Like {@link #line(String, String)}, with long text wrapped at word breaks to fit a terminal. */
  static String wrapped(String replica, String text) {
    StringBuilder lines = new StringBuilder();
    StringBuilder current = new StringBuilder();
    for (String word : text.split(" ")) {
      if (current.length() > 0 && INDENT + current.length() + 1 + word.length() > WIDTH) {
        lines.append(lines.length() == 0 ? line(replica, current.toString()) : line("", current.toString()))
            .append(System.lineSeparator());
        current.setLength(0);
      }
      current.append(current.length() == 0 ? "" : " ").append(word);
    }
    return lines.append(lines.length() == 0 ? line(replica, current.toString()) : line("", current.toString()))
        .toString();
  }
}
