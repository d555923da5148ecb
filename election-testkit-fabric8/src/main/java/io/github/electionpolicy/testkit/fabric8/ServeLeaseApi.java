package io.github.electionpolicy.testkit.fabric8;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.CountDownLatch;
import java.util.function.UnaryOperator;

/**
 * Serves the embedded Lease API to other processes, for tests that span JVMs: run two or three replicas of a
 * controller as processes of their own, kill one with {@code kill -9}, stop another with SIGTERM, and read from
 * the server's own log what happened to the Lease.
 *
 * <pre>{@code
 * java -cp "$TEST_CLASS_PATH" io.github.electionpolicy.testkit.fabric8.ServeLeaseApi \
 *     --port 0 --kubeconfig target/lease-api/kubeconfig
 * }</pre>
 *
 * <p>Options: {@code --kubeconfig PATH} (required) is where it writes a kubeconfig whose current context points
 * at the server, with namespace {@code --namespace} ({@code default} unless given), so a controller finds it
 * through {@code KUBECONFIG} as it finds a cluster; {@code --port N} is the loopback port to listen on, {@code
 * 0} (the default) for a free one. The server is the one {@link LeaseApi} embeds: fabric8's mock API server in
 * CRUD mode, which rejects stale {@code resourceVersion}s with 409 and answers SelfSubjectAccessReviews
 * (allowed).
 *
 * <p>What it prints on standard output, one line each, flushed at once:
 *
 * <pre>{@code
 * lease-api: embedded Lease API at http://localhost:40613/ (fabric8 mock server, CRUD mode), namespace default
 * port: 40613
 * kubeconfig: /home/me/orders/target/lease-api/kubeconfig
 * 2026-12-01T11:40:02.118Z lease default/orders rv=3 holder="orders-0" transitions=0 duration=4s created
 * 2026-12-01T11:40:02.635Z lease default/orders rv=4 holder="orders-0" transitions=0 duration=4s renewed
 * 2026-12-01T11:40:09.210Z lease default/orders rv=19 holder="orders-2" transitions=1 duration=4s taken over from "orders-0"
 * 2026-12-01T11:40:11.902Z lease default/orders rv=25 holder="" transitions=1 duration=4s released by "orders-2"
 * 2026-12-01T11:40:11.960Z lease default/orders rv=26 holder="orders-1" transitions=2 duration=4s acquired
 * lease-api: stopping (SIGTERM or exit)
 * lease default/orders: holder "orders-1", transitions=2, 31 writes
 * lease-api: stopped; the kubeconfig stays at /home/me/orders/target/lease-api/kubeconfig
 * }</pre>
 *
 * <p>The {@code kubeconfig:} line comes once the server listens and the file is written (atomically; an older
 * file at that path is removed first, so a script may also wait for the file). Each Lease write the server
 * accepted follows, with the wall-clock instant (UTC) at which the server stored it, its resource version, the
 * holder it left ({@code ""}: released), {@code spec.leaseTransitions}, the lease duration, and what changed:
 * {@code created}, {@code renewed} (with {@code , duration 4s -> 1s} when the duration changed, which is how
 * fabric8's own {@code LeaderElector} releases), {@code acquired} (from no holder), {@code released by "H"} (the
 * holder emptied, as election-fabric8 releases), {@code taken over from "H"}, {@code rewritten} (still no
 * holder). On SIGTERM (or any normal exit of the JVM) it prints the last
 * state of each Lease, stops the server and leaves the kubeconfig where it is; the JVM then exits with status 143
 * after SIGTERM. An option it does not accept (a port in use included) ends it at once with status 2 and a
 * message on standard error; a class path on which the mock server cannot serve (see {@link LeaseApi.Builder#start()}), with
 * status 1.
 *
 * <p>A command-line entry point; it holds no state a caller could share.
 */
public final class ServeLeaseApi {

  private ServeLeaseApi() {}

  /**
   * Starts the server, writes the kubeconfig and serves until the JVM is stopped.
   *
   * @param args {@code --kubeconfig PATH [--port N] [--namespace NAME]}
   * @throws InterruptedException never in practice: the main thread waits until the JVM exits
   */
  public static void main(String[] args) throws InterruptedException {
    ServeOptions options;
    try {
      options = ServeOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    Running running;
    try {
      running = start(options, out);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    } catch (IllegalStateException e) {
      System.err.println(e.getMessage()); // the mock server cannot serve on this class path
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(running::stop, "serve-lease-api-shutdown"));
    new CountDownLatch(1).await();
  }

  /** Starts serving as {@code options} say, printing to {@code out}; the caller stops it. */
  static Running start(ServeOptions options, PrintStream out) {
    Path kubeconfig = options.kubeconfig().toAbsolutePath();
    try {
      Files.deleteIfExists(kubeconfig);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove the older kubeconfig " + kubeconfig, e);
    }
    LeaseWriteLines lines = new LeaseWriteLines(out);
    EmbeddedLeaseApi server;
    try {
      server = EmbeddedLeaseApi.start(options.namespace(), true, UnaryOperator.identity(), options.port(),
          lines::print);
    } catch (RuntimeException e) {
      if (options.port() == 0) {
        throw e;
      }
      throw new IllegalArgumentException("--port=\"" + options.port() + "\" is not valid: accepted values are 0 (a "
          + "free port) or a loopback port no other process listens on; the server could not listen there ("
          + e + "); fix: pass --port 0, or stop what listens on " + options.port(), e);
    }
    out.println("lease-api: embedded Lease API at " + server.url() + " (fabric8 mock server, CRUD mode), namespace "
        + options.namespace());
    out.println("port: " + server.port());
    try {
      writeAtomically(kubeconfig, kubeconfigFor(server.url(), options.namespace()));
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
    out.println("kubeconfig: " + kubeconfig);
    return new Running(server, lines, kubeconfig, out);
  }

  /** A server this command started, and how to stop it. Thread-safe. */
  static final class Running {

    private final EmbeddedLeaseApi server;
    private final LeaseWriteLines lines;
    private final Path kubeconfig;
    private final PrintStream out;
    private boolean stopped;

    Running(EmbeddedLeaseApi server, LeaseWriteLines lines, Path kubeconfig, PrintStream out) {
      this.server = server;
      this.lines = lines;
      this.kubeconfig = kubeconfig;
      this.out = out;
    }

    int port() {
      return server.port();
    }

    /** Prints the last state of each Lease, then stops the server; the kubeconfig stays. */
    synchronized void stop() {
      if (stopped) {
        return;
      }
      stopped = true;
      out.println("lease-api: stopping (SIGTERM or exit)");
      lines.printSummary(server.leaseWrites());
      server.close();
      out.println("lease-api: stopped; the kubeconfig stays at " + kubeconfig);
      out.flush();
    }
  }

  static String kubeconfigFor(String serverUrl, String namespace) {
    return String.join("\n",
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: lease-api",
        "  cluster:",
        "    server: " + serverUrl,
        "users:",
        "- name: lease-api",
        "  user:",
        "    token: lease-api",
        "contexts:",
        "- name: lease-api",
        "  context:",
        "    cluster: lease-api",
        "    user: lease-api",
        "    namespace: " + namespace,
        "current-context: lease-api",
        "");
  }

  private static void writeAtomically(Path file, String text) {
    try {
      Path parent = file.getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Path partial = file.resolveSibling(file.getFileName() + ".partial");
      Files.writeString(partial, text, StandardCharsets.UTF_8);
      Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the kubeconfig " + file, e);
    }
  }
}
