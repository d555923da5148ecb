package io.github.electionpolicy.examples;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Serves the demo's embedded API server to controllers in other processes, for instance the README's
 * quickstart in CI: it writes a kubeconfig that points at the server (namespace {@code default}), so a
 * controller finds it through {@code KUBECONFIG} as it would find a cluster, and serves until the process is
 * terminated. Terminating it (SIGTERM) prints every Lease the server stores, with its holder, then stops the
 * server: a controller that released its Lease on shutdown left an empty holder.
 *
 * <pre>{@code
 * java -cp ... io.github.electionpolicy.examples.ServeApiServer --kubeconfig target/kubeconfig
 * }</pre>
 *
 * <p>The kubeconfig appears atomically once the server answers, so a script can wait for the file.
 *
 * <p>A command-line tool; it holds no state a caller could share.
 */
public final class ServeApiServer {

  private ServeApiServer() {}

  /**
   * Starts the server, writes the kubeconfig and serves until the process is terminated.
   *
   * @param args {@code --kubeconfig PATH}: where to write the kubeconfig
   * @throws InterruptedException never in practice: the main thread waits until the JVM exits
   */
  public static void main(String[] args) throws InterruptedException {
    Path kubeconfig;
    try {
      kubeconfig = kubeconfigOption(args);
    } catch (InvalidOptionException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    LeaseApi server = LeaseApi.builder().namespace("default").target(ApiServerTarget.embedded()).start();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      printLeases(server, System.out);
      server.close();
    }, "serve-api-server-shutdown"));
    writeAtomically(kubeconfig, kubeconfig(server.url()));
    System.out.println("api server: " + server.url() + " (embedded fabric8 mock server, CRUD mode)");
    System.out.println("kubeconfig: " + kubeconfig);
    System.out.flush();
    new CountDownLatch(1).await();
  }

  static Path kubeconfigOption(String[] args) {
    if (args.length == 2 && args[0].equals("--kubeconfig") && !args[1].isBlank()) {
      return Path.of(args[1]);
    }
    throw new InvalidOptionException("--kubeconfig", args.length == 2 ? args[1] : null, "a file path",
        "run it as ServeApiServer --kubeconfig PATH");
  }

  static String kubeconfig(String serverUrl) {
    return String.join("\n",
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: embedded",
        "  cluster:",
        "    server: " + serverUrl,
        "users:",
        "- name: embedded",
        "  user:",
        "    token: embedded",
        "contexts:",
        "- name: embedded",
        "  context:",
        "    cluster: embedded",
        "    user: embedded",
        "    namespace: default",
        "current-context: embedded",
        "");
  }

  private static void writeAtomically(Path file, String text) {
    try {
      Path absolute = file.toAbsolutePath();
      Path partial = absolute.resolveSibling(absolute.getFileName() + ".partial");
      Files.writeString(partial, text, StandardCharsets.UTF_8);
      Files.move(partial, absolute, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("could not write the kubeconfig " + file, e);
    }
  }

  private static void printLeases(LeaseApi server, PrintStream out) {
    // The fixture closes the clients it hands out when it closes.
    try {
      KubernetesClient client = server.client();
      List<Lease> leases = client.leases().inAnyNamespace().list().getItems();
      if (leases.isEmpty()) {
        out.println("leases: none");
      }
      for (Lease lease : leases) {
        String holder = lease.getSpec() == null || lease.getSpec().getHolderIdentity() == null ? ""
            : lease.getSpec().getHolderIdentity();
        out.println("lease " + lease.getMetadata().getNamespace() + "/" + lease.getMetadata().getName()
            + ": holder \"" + holder + "\"" + (holder.isEmpty() ? " (released)" : "")
            + ", leaseTransitions=" + (lease.getSpec() == null ? null : lease.getSpec().getLeaseTransitions()));
      }
    } catch (RuntimeException e) {
      out.println("leases: could not be read: " + e);
    }
    out.flush();
  }
}
