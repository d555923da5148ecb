package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.Optional;

/** What the runner does with the Lease loop's findings; called on the loop's thread. */
interface LeaseEvents {
  /**
   * The Lease is held by someone else, or free, as far as this follower saw. Also called, with no leader,
   * when a take of a free or expired Lease failed without naming a holder, so the runner leaves STARTING once
   * it has been in touch with the API server.
   */
  void following(Optional<String> leader);

  /** This process acquired the Lease; called on the elector thread, must not block. */
  void elected(LeadershipTerm term);

  /** This process lost the Lease; may block until reconcilers stopped; says whether to contend again. */
  LossHandler.AfterLoss lost(LeadershipTerm term);

  /** A renewal succeeded; its update took {@code roundTrip} from sent to answered. Must not block. */
  void renewed(Duration roundTrip);

  /** A renewal failed; the leader keeps trying until its deadline. */
  void renewFailed(Throwable cause, Duration sinceLastRenewal);

  /**
   * The loop failed ({@code cause} escaped it, or its thread was interrupted) and ends for good; the term it
   * led, if any, has ended. Called on the dying elector thread.
   */
  void died(Optional<LeadershipTerm> term, Throwable cause);
}
