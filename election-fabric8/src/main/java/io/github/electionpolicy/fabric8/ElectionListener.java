package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.Optional;

/**
 * Hooks for metrics, logs and followers' preparations: changes of state, the leader a follower follows, and
 * renewals that succeeded or failed. Every method has an empty default, so an implementation overrides what
 * it needs. The runner calls listeners one event at a time, in order, on a thread of its own (never the thread
 * that renews the Lease); an exception from a listener is logged and ignored. A slow listener delays the
 * events after it, not the election: hand long work (warming a cache) to a thread of your own.
 *
 * <pre>{@code
 * ElectionListener metrics = new ElectionListener() {
 *   public void stateChanged(ElectionState previous, ElectionState current) {
 *     leaderGauge.set(current.kind() == ElectionState.Kind.LEADING ? 1 : 0);
 *   }
 *   public void renewed(Duration roundTrip) {
 *     renewLatency.record(roundTrip);
 *   }
 *   public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
 *     renewFailures.increment();
 *   }
 * };
 *
 * ElectionListener warmCaches = new ElectionListener() {
 *   public void following(Optional<String> leader) {
 *     informers.startIfNotRunning();   // returns at once; a new leader then finds its caches filled
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
   * Called when this runner begins to follow (once its first Lease calls show another holder, or a free Lease
   * it did not manage to take; or after it lost the Lease) and each time the leader it follows changes,
   * including to none known; so exactly when the state becomes a different {@link ElectionState.Following},
   * right after {@link #stateChanged} for that change. Never called while leading, running unelected or stopped. Use it
   * to prepare a follower for taking over, e.g. to start informers so their caches are warm when it is
   * elected.
   *
   * @param leader the holder of the Lease as last seen; empty when the Lease is free or the holder unknown
   */
  default void following(Optional<String> leader) {}

  /**
   * Called after each successful renewal of the Lease by this leader (about once per
   * {@link LeaseSettings#retryPeriod()} while it leads), with the round-trip time of the update that renewed
   * it: from just before the request was sent until its answer was taken in, on the Lease loop's monotonic
   * clock. Not called for the write that took the Lease (that is a change of state to leading), for a renewal
   * answered after the renew deadline (that is a loss), for the release, nor for a follower's reads. Like
   * every hook it runs on the listeners' thread, after the renewal took effect: a slow listener never delays
   * the next renewal.
   *
   * @param roundTrip how long the renewal's update took, sent to answered
   */
  default void renewed(Duration roundTrip) {}

  /**
   * Called when the leader failed to renew the Lease; it keeps trying until the renew deadline.
   *
   * @param cause what failed: an HTTP error, a timeout, a conflict
   * @param sinceLastRenewal time since the last successful renewal was sent
   */
  default void renewFailed(Throwable cause, Duration sinceLastRenewal) {}
}
