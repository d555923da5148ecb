package io.github.electionpolicy.examples;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Explain;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.LeaseAccess;
import io.github.electionpolicy.fabric8.LeaseNamespace;
import io.github.electionpolicy.fabric8.LeaseSettings;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The operator tool for a controller that uses election-fabric8: everything core's {@link Explain} prints
 * (the outcome, every reason, every warning, the summary), and, when the decision is to contend, one line
 * each for the Lease it would use (namespace resolved as the adapter resolves it), whether the API server
 * answers, whether the RBAC it needs is granted (asked as the adapter's preflight asks), and who holds the
 * Lease now. It only reads: the Lease is never written.
 *
 * <pre>{@code
 * java -cp ... io.github.electionpolicy.examples.ExplainCluster --lease-name orders-controller \
 *     --substrate kubernetes --uses-kubernetes-api
 * }</pre>
 *
 * <p>Options: {@code --lease-name NAME} (required when the process contends), {@code --namespace NS},
 * {@code --master URL}, {@code --kubeconfig PATH}, and explain's {@code --substrate NAME}, {@code
 * --uses-kubernetes-api}, {@code --kill-switch-variable NAME}; {@code --help}. Without {@code --master} or
 * {@code --kubeconfig} the client is configured as a controller's would be: in a pod from its service
 * account, elsewhere from {@code ~/.kube/config}. Every request is bounded (connect {@code 3s}, answer
 * {@code 5s}, no retries).
 *
 * <p>Exit status, as explain's: {@value #EXIT_DECIDED} when a decision was made and the checks ran, whatever
 * their verdicts (read the lines); {@value #EXIT_INVALID} when an option or a setting is invalid, with the
 * reason on standard error.
 *
 * <p>Stateless and thread-safe.
 */
public final class ExplainCluster {

  /** Exit status when a decision was made and the checks ran. */
  public static final int EXIT_DECIDED = Explain.EXIT_DECIDED;
  /** Exit status when an option or a setting is invalid. */
  public static final int EXIT_INVALID = Explain.EXIT_INVALID;

  static final String USAGE = String.join("\n",
      "usage: explain-cluster [--lease-name NAME] [--namespace NS] [--master URL | --kubeconfig PATH]",
      "                       [--substrate NAME] [--uses-kubernetes-api] [--kill-switch-variable NAME]",
      "  --lease-name NAME    the leaseName of the controller's LeaseSettings (required when it contends)",
      "  --namespace NS       the namespace set in its LeaseSettings, if any; else resolved as the adapter does",
      "  --master URL         the API server to ask; --kubeconfig PATH: the kubeconfig to use",
      "  --substrate NAME, --uses-kubernetes-api, --kill-switch-variable NAME: as for explain",
      "exit status: 0 when a decision was made and the checks ran (whatever their verdicts), "
          + "2 on an invalid option or setting");

  private ExplainCluster() {}

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
   * @param out where the explanation and the verdicts go
   * @param err where errors go
   * @return {@link #EXIT_DECIDED} or {@link #EXIT_INVALID}
   */
  public static int run(String[] args, Environment environment, PrintStream out, PrintStream err) {
    return run(args, environment, out, err, LeaseSettings.SERVICE_ACCOUNT_NAMESPACE_FILE);
  }

  static int run(String[] args, Environment environment, PrintStream out, PrintStream err,
      Path serviceAccountNamespaceFile) {
    Objects.requireNonNull(args, "args");
    Objects.requireNonNull(environment, "environment");
    Objects.requireNonNull(out, "out");
    Objects.requireNonNull(err, "err");
    Options options;
    ClusterConnection connection;
    try {
      options = Options.parse(args);
      if (options.help) {
        out.println(USAGE);
        return EXIT_DECIDED;
      }
      connection = ClusterConnection.of(options.master, options.kubeconfig);
    } catch (InvalidOptionException e) {
      err.println("explain-cluster: " + e.getMessage());
      err.println(USAGE);
      return EXIT_INVALID;
    }
    int explained = Explain.run(options.explainArgs.toArray(new String[0]), environment, out, err);
    if (explained != Explain.EXIT_DECIDED) {
      return explained;
    }
    ElectionDecision decision = options.policy().decide(environment, options.substrate());
    if (!decision.contends()) {
      out.println("cluster:     not checked: the process runs unelected and makes no Lease call");
      return EXIT_DECIDED;
    }
    try {
      checkCluster(options, connection, serviceAccountNamespaceFile, out);
      return EXIT_DECIDED;
    } catch (InvalidElectionSettingException e) {
      err.println("explain-cluster: " + e.getMessage());
      return EXIT_INVALID;
    }
  }

  private static void checkCluster(Options options, ClusterConnection connection, Path serviceAccountFile,
      PrintStream out) {
    if (options.leaseName.isEmpty()) {
      throw new InvalidElectionSettingException("--lease-name", null,
          "the leaseName of the controller's LeaseSettings, e.g. orders-controller",
          "pass --lease-name NAME so the Lease, its namespace and the RBAC for it can be checked");
    }
    // The adapter's own checks of the name and the namespace, so the tool rejects what the adapter would.
    LeaseSettings.Builder builder = LeaseSettings.builder().leaseName(options.leaseName.get()).identity("explain")
        .serviceAccountNamespaceFile(serviceAccountFile);
    options.namespace.ifPresent(builder::namespace);
    LeaseSettings settings = builder.build();
    String leaseName = settings.leaseName();
    try (KubernetesClient client = connection.newClient()) {
      LeaseNamespace namespace;
      try {
        namespace = LeaseNamespace.resolve(settings, client.getNamespace());
      } catch (InvalidElectionSettingException none) {
        out.println("lease:       NO NAMESPACE; the adapter would refuse to start: " + none.getMessage());
        out.println("api server:  " + ApiServerCheck.check(client).verdict());
        out.println("rbac:        not checked: no namespace");
        return;
      }
      out.println("lease:       " + namespace.name() + "/" + leaseName + " (" + source(namespace, serviceAccountFile)
          + ")");
      ApiServerCheck server = ApiServerCheck.check(client);
      out.println("api server:  " + server.verdict());
      if (!server.answers()) {
        out.println("rbac:        not checked: the API server does not answer");
        return;
      }
      LeaseAccess access = LeaseAccess.review(client, namespace.name(), leaseName);
      out.println("rbac:        " + verdict(access, namespace.name()));
      if (access.verdict() == LeaseAccess.Verdict.DENIED) {
        out.print(LeaseAccess.roleYaml(namespace.name(), leaseName).indent(13));
      }
      out.println("holder:      " + holder(client, namespace.name(), leaseName));
    }
  }

  private static String source(LeaseNamespace namespace, Path serviceAccountFile) {
    return switch (namespace.source()) {
      case EXPLICIT -> "from --namespace";
      case SERVICE_ACCOUNT_FILE -> "from the pod's service account, " + serviceAccountFile;
      case CLIENT_CONFIGURATION -> "from " + namespace.source().description();
    };
  }

  private static String verdict(LeaseAccess access, String namespace) {
    String where = "leases (coordination.k8s.io) in namespace \"" + namespace + "\"";
    return switch (access.verdict()) {
      case GRANTED -> "granted: " + String.join(", ", LeaseAccess.REQUIRED_VERBS) + " on " + where
          + (access.watchDenied() ? "; watch is not, so followers notice a released Lease only at their next poll"
              : "");
      case DENIED -> "DENIED: may not " + String.join(", ", access.deniedVerbs()) + " " + where
          + "; the adapter would refuse to start. A Role that grants what it needs:";
      case UNKNOWN -> "could not be checked: " + access.unknownReason().orElseThrow()
          + "; the adapter would warn and contend anyway";
    };
  }

  private static String holder(KubernetesClient client, String namespace, String leaseName) {
    try {
      Lease lease = client.leases().inNamespace(namespace).withName(leaseName).get();
      if (lease == null) {
        return "none: the Lease does not exist yet; the first replica to contend creates it";
      }
      String holder = lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
      if (holder == null || holder.isBlank()) {
        return "none: the Lease is free (released or never held); the next replica to try takes it";
      }
      return holder + " (leaseTransitions=" + lease.getSpec().getLeaseTransitions() + ", renewTime="
          + lease.getSpec().getRenewTime() + ")";
    } catch (KubernetesClientException e) {
      return "not read: " + ApiServerCheck.describe(e);
    }
  }

  /** The parsed options; explain's are kept as written, to hand them to {@link Explain#run}. */
  private static final class Options {
    Optional<String> leaseName = Optional.empty();
    Optional<String> namespace = Optional.empty();
    Optional<String> master = Optional.empty();
    Optional<Path> kubeconfig = Optional.empty();
    String substrateName = "direct";
    boolean usesKubernetesApi;
    Optional<String> killSwitchVariable = Optional.empty();
    boolean help;
    final List<String> explainArgs = new ArrayList<>();

    static Options parse(String[] args) {
      Options options = new Options();
      CommandLine line = new CommandLine(args);
      while (line.hasNext()) {
        String option = line.nextOption();
        switch (option) {
          case "--lease-name" -> options.leaseName = Optional.of(line.value(option, "a Lease name"));
          case "--namespace" -> options.namespace = Optional.of(line.value(option, "a namespace"));
          case "--master" -> options.master = Optional.of(line.value(option, "an http:// or https:// URL"));
          case "--kubeconfig" -> options.kubeconfig = Optional.of(line.path(option, "a kubeconfig file"));
          case "--substrate" -> {
            options.substrateName = line.value(option, "a substrate name");
            options.explainArgs.add(option);
            options.explainArgs.add(options.substrateName);
          }
          case "--uses-kubernetes-api" -> {
            options.usesKubernetesApi = true;
            options.explainArgs.add(option);
          }
          case "--kill-switch-variable" -> {
            options.killSwitchVariable = Optional.of(line.value(option, "an environment variable name"));
            options.explainArgs.add(option);
            options.explainArgs.add(options.killSwitchVariable.get());
          }
          case "--help", "-h" -> options.help = true;
          default -> throw CommandLine.unknown(option, "--lease-name, --namespace, --master, --kubeconfig, "
              + "--substrate, --uses-kubernetes-api, --kill-switch-variable, --help");
        }
      }
      if (options.master.isPresent() && options.kubeconfig.isPresent()) {
        throw new InvalidOptionException("--master", options.master.get(),
            "either --master or --kubeconfig, not both", "drop one of them");
      }
      return options;
    }

    ElectionPolicy policy() {
      ElectionPolicy.Builder policy = ElectionPolicy.builder();
      killSwitchVariable.ifPresent(policy::killSwitchVariable);
      return policy.build();
    }

    Substrate substrate() {
      return Substrate.of(substrateName, usesKubernetesApi);
    }
  }
}
