package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.Optional;

/** What a {@link LeaseElector} tells its runner; called on the loop. */
interface ElectorSignals {
  /** The Lease is held by someone else, or free, as far as this follower saw. */
  void following(Optional<String> holder);

  /** This process won {@code term}. */
  void elected(LeadershipTerm term);

  /** {@code term} is lost (it has ended); the elector waits for {@link LeaseElector#afterLoss}. */
  void lost(LeadershipTerm term);

  /** A renewal extended the term. */
  void renewed(Duration roundTrip);

  /** A renewal failed; the leader keeps trying until its deadline. */
  void renewFailed(Throwable cause, Duration sinceLastRenewal);

  /**
   * The API server answered a request of this elector's: the Lease read or written, or a 409 or a 404 (not a call
   * that failed otherwise: no answer in time, a 5xx, a 403, a refused connection). A sharded replica then lists its
   * Leases again at once if its list and watch failed meanwhile (the server is back).
   */
  default void answered() {}

  /** The loop is over: nothing more will be sent. */
  void finished();

  /** Runs {@code task} on the loop later, as the runner's own task (its failures are the runner's). */
  void onLoop(Runnable task);

  /** Runs {@code task} on the loop after {@code delayNanos}, as the runner's own task. */
  RunnerLoop.Timer onLoopAfter(long delayNanos, Runnable task);
}
