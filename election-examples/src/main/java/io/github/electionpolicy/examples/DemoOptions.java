package io.github.electionpolicy.examples;

import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.KillSwitch;
import io.github.electionpolicy.Substrate;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The demo's command-line options, parsed and checked. The timings are checked later, by {@code
 * LeaseSettings}, so the demo accepts exactly what the adapter accepts.
 *
 * @param replicas how many controller replicas to run, 1 to {@value #MAX_REPLICAS}
 * @param leaseDuration the Lease duration
 * @param renewDeadline the renew deadline
 * @param retryPeriod the retry period
 * @param substrate what the replicas' work goes through: {@code kubernetes} uses the Kubernetes API
 * @param killSwitch the value given to the real kill-switch variable, empty to leave it unset
 * @param master the API server to use instead of the embedded one
 * @param kubeconfig the kubeconfig to use instead of the embedded server
 * @param namespace the namespace of the Lease on a real cluster; empty for the adapter's own resolution
 * @param help whether only the usage was asked for
 */
record DemoOptions(int replicas, Duration leaseDuration, Duration renewDeadline, Duration retryPeriod,
    Substrate substrate, Optional<String> killSwitch, Optional<String> master, Optional<Path> kubeconfig,
    Optional<String> namespace, boolean help) {

  static final int MAX_REPLICAS = 9;
  static final Duration DEFAULT_LEASE_DURATION = Duration.ofSeconds(2);
  static final Duration DEFAULT_RENEW_DEADLINE = Duration.ofMillis(1500);
  static final Duration DEFAULT_RETRY_PERIOD = Duration.ofMillis(200);

  static final String USAGE = String.join("\n",
      "usage: demo [--replicas N] [--lease-duration D] [--renew-deadline D] [--retry-period D]",
      "            [--substrate kubernetes|direct] [--kill-switch on|off]",
      "            [--master URL | --kubeconfig PATH] [--namespace NS] [--help]",
      "  --replicas N         controller replicas in this JVM, 1 to " + MAX_REPLICAS + " (default 3)",
      "  --lease-duration D   default 2s; also --renew-deadline (1500ms) and --retry-period (200ms);",
      "                       D is " + CommandLine.DURATION_FORMAT,
      "  --substrate S        kubernetes (default: the work uses the Kubernetes API) or direct",
      "  --kill-switch V      the value of " + ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE
          + " the replicas see: on or off (default unset)",
      "  --master URL         run against this API server instead of the embedded one",
      "  --kubeconfig PATH    run against the cluster of this kubeconfig instead of the embedded server",
      "  --namespace NS       the Lease's namespace on a real cluster (default: the kubeconfig's)",
      "exit status: 0 when the demo ran to its end, 1 when it failed (the reason is printed), "
          + "2 on an invalid option");

  static DemoOptions parse(String[] args) {
    int replicas = 3;
    Duration leaseDuration = DEFAULT_LEASE_DURATION;
    Duration renewDeadline = DEFAULT_RENEW_DEADLINE;
    Duration retryPeriod = DEFAULT_RETRY_PERIOD;
    Substrate substrate = Substrate.usingKubernetesApi("kubernetes");
    Optional<String> killSwitch = Optional.empty();
    Optional<String> master = Optional.empty();
    Optional<Path> kubeconfig = Optional.empty();
    Optional<String> namespace = Optional.empty();
    CommandLine line = new CommandLine(args);
    while (line.hasNext()) {
      String option = line.nextOption();
      switch (option) {
        case "--replicas" -> replicas = line.integer(option, 1, MAX_REPLICAS);
        case "--lease-duration" -> leaseDuration = line.duration(option);
        case "--renew-deadline" -> renewDeadline = line.duration(option);
        case "--retry-period" -> retryPeriod = line.duration(option);
        case "--substrate" -> substrate = substrate(line.value(option, "kubernetes or direct"));
        case "--kill-switch" -> killSwitch = Optional.of(killSwitch(line.value(option, "on or off")));
        case "--master" -> master = Optional.of(line.value(option, "an http:// or https:// URL"));
        case "--kubeconfig" -> kubeconfig = Optional.of(line.path(option, "a kubeconfig file"));
        case "--namespace" -> namespace = Optional.of(line.value(option, "a namespace"));
        case "--help", "-h" -> {
          return new DemoOptions(replicas, leaseDuration, renewDeadline, retryPeriod, substrate, killSwitch,
              master, kubeconfig, namespace, true);
        }
        default -> throw CommandLine.unknown(option, "--replicas, --lease-duration, --renew-deadline, "
            + "--retry-period, --substrate, --kill-switch, --master, --kubeconfig, --namespace, --help");
      }
    }
    if (master.isPresent() && kubeconfig.isPresent()) {
      throw new InvalidOptionException("--master", master.get(), "either --master or --kubeconfig, not both",
          "drop one of them");
    }
    if (namespace.isPresent() && master.isEmpty() && kubeconfig.isEmpty()) {
      throw new InvalidOptionException("--namespace", namespace.get(),
          "a namespace with --master or --kubeconfig only (the embedded server uses \"default\")",
          "add --master or --kubeconfig, or drop --namespace");
    }
    return new DemoOptions(replicas, leaseDuration, renewDeadline, retryPeriod, substrate, killSwitch, master,
        kubeconfig, namespace, false);
  }

  private static Substrate substrate(String name) {
    switch (name) {
      case "kubernetes":
        return Substrate.usingKubernetesApi("kubernetes");
      case "direct":
        return Substrate.withoutKubernetesApi("direct");
      default:
        throw new InvalidOptionException("--substrate", name,
            "kubernetes (the replicas' work uses the Kubernetes API) or direct (it does not)",
            "write --substrate kubernetes or --substrate direct");
    }
  }

  /** Checked by the real kill switch, so the demo takes every value a controller would. */
  private static String killSwitch(String value) {
    String variable = ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE;
    try {
      KillSwitch.read(Environment.of(Map.of(variable, value)), variable);
      return value;
    } catch (InvalidElectionSettingException e) {
      throw new InvalidOptionException("--kill-switch", value,
          "on or off (or any value " + variable + " accepts: " + KillSwitch.ACCEPTED_VALUES + ")",
          "write --kill-switch on or --kill-switch off");
    }
  }

  /** The environment each replica decides in: the kill switch only, so the machine's own does not matter. */
  Environment replicaEnvironment() {
    return Environment.of(killSwitch.map(v -> Map.of(ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE, v))
        .orElse(Map.of()));
  }

  boolean embedded() {
    return master.isEmpty() && kubeconfig.isEmpty();
  }
}
