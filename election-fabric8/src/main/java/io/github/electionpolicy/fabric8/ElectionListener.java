package io.github.electionpolicy.fabric8;

import java.time.Duration;

/**
 * Hooks for metrics and logs: leadership changes and failed renewals. Both methods have empty defaults,
 * so an implementation overrides what it needs. The runner calls listeners one event at a time, in order,
 * on a thread of its own (never the thread that renews the Lease); an exception from a listener is logged
 * and ignored.
 *
 * <pre>{@code
 * ElectionListener metrics = new ElectionListener() {
 *   public void stateChanged(ElectionState previous, ElectionState current) {
 *     leaderGauge.set(current.kind() == ElectionState.Kind.LEADING ? 1 : 0);
 *   }
 *   public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
 *     renewFailures.increment();
 *   }
 * };
 * }</pre>
 *
 * <p>Implementations need not be thread-safe with respect to the runner: calls never overlap.
 */
public interface ElectionListener {

  /**
   * Called after each change of state, e.g. from following to leading.
   *
   * @param previous the state before
   * @param current the state now
   */
  default void stateChanged(ElectionState previous, ElectionState current) {}

  /**
   * Called when the leader failed to renew the Lease; it keeps trying until the renew deadline.
   *
   * @param cause what failed: an HTTP error, a timeout, a conflict
   * @param sinceLastRenewal time since the last successful renewal was sent
   */
  default void renewFailed(Throwable cause, Duration sinceLastRenewal) {}
}
