package io.github.electionpolicy.benchmarks.failover;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Which API server a run measures on, chosen by the {@code kubeconfig} setting of {@link BenchmarkSettings}:
 * fabric8's mock API server in the benchmark's JVM (the default), or a real API server on this machine's
 * loopback interface, such as the one {@code tools/kube-apiserver/cluster.sh start DIR} runs. The two differ
 * in what the harness can see, and the output says so:
 *
 * <ul>
 *   <li><b>mock</b>: the server's dispatcher counts every Lease request and times every applied write as it
 *       applies it; a crashed replica is first answered 503 for 150 ms, then its connections are dropped (see
 *       {@link MockApiServer} for why); a round that times out is repeated on a new mock server, because that
 *       server can stall.
 *   <li><b>real</b>: the replicas' proxies pass TLS through, so requests cannot be counted ({@link
 *       #countsRequests()} is false and the load rows read {@code n/a (TLS)}); writes are timed when a watch of
 *       the harness delivers them; a crash drops and refuses the replica's connections at once; a round that
 *       times out fails the run, since a real server has no stall to blame.
 * </ul>
 *
 * <pre>{@code
 * ServerMode mode = BenchmarkSettings.parse("kubeconfig=/tmp/cluster/admin.kubeconfig").serverMode();
 * try (ApiServer server = mode.start(new EventLog())) {
 *   ...
 * }
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public sealed interface ServerMode permits ServerMode.Mock, ServerMode.Real {

  /**
   * fabric8's mock API server, started in this JVM.
   *
   * @return the mode
   */
  static ServerMode mock() {
    return new Mock();
  }

  /**
   * A real API server, reached with the current context of a kubeconfig file.
   *
   * @param kubeconfig the kubeconfig file; its server must be on a loopback address
   * @return the mode
   */
  static ServerMode real(Path kubeconfig) {
    return new Real(kubeconfig);
  }

  /**
   * Starts the server, or connects to it and creates the run's namespace.
   *
   * @param log where the server's side records Lease writes (and, on the mock, requests)
   * @return the server, which the caller closes
   */
  ApiServer start(EventLog log);

  /**
   * Whether the harness can count each replica's Lease requests on this server.
   *
   * @return true on the mock only
   */
  boolean countsRequests();

  /**
   * Whether a round that timed out is repeated on a new server: only on the mock, which can stall.
   *
   * @return true on the mock only
   */
  boolean repeatsTimedOutRounds();

  /**
   * How the instants of Lease writes are taken, for the table's row label.
   *
   * @return {@code server side} or {@code seen by a watch}
   */
  String writeInstants();

  /** fabric8's mock API server in CRUD mode, over plain HTTP on 127.0.0.1, in this JVM. */
  record Mock() implements ServerMode {

    @Override
    public ApiServer start(EventLog log) {
      return new MockApiServer(log, "bench");
    }

    @Override
    public boolean countsRequests() {
      return true;
    }

    @Override
    public boolean repeatsTimedOutRounds() {
      return true;
    }

    @Override
    public String writeInstants() {
      return "server side";
    }

    @Override
    public String toString() {
      return "fabric8 mock API server";
    }
  }

  /**
   * A real API server named by a kubeconfig file.
   *
   * @param kubeconfig the kubeconfig file
   */
  record Real(Path kubeconfig) implements ServerMode {

    /**
     * Checks the path.
     *
     * @param kubeconfig the kubeconfig file
     */
    public Real {
      Objects.requireNonNull(kubeconfig, "kubeconfig");
    }

    @Override
    public ApiServer start(EventLog log) {
      return new RealApiServer(kubeconfig, log, "bench");
    }

    @Override
    public boolean countsRequests() {
      return false;
    }

    @Override
    public boolean repeatsTimedOutRounds() {
      return false;
    }

    @Override
    public String writeInstants() {
      return "seen by a watch";
    }

    @Override
    public String toString() {
      return "real API server from " + kubeconfig;
    }
  }
}
