package io.github.electionpolicy.benchmarks.failover;

/**
 * One replica of one leader-election implementation, as the benchmark drives it. An implementation joins the
 * comparison with one class that implements this interface and one {@link ContenderFactory}.
 *
 * <p>The contender calls its {@link ReplicaSpec#recorder()} when it starts and stops running reconcilers.
 * Each method is called once, from the harness thread; implementations need not be thread-safe.
 */
public interface Contender {

  /** Starts contending for the Lease; returns at once, without waiting to lead. */
  void start();

  /**
   * Stops the way a controller shuts down: stop the reconcilers, release the Lease, return when done.
   * The measured graceful hand-over starts when this is called.
   */
  void close();

  /**
   * Stops the way a killed process does: the Lease is not released and the client is closed abruptly. The
   * harness has already told the server to refuse this replica, so no request it still sends can succeed.
   */
  void crash();
}
