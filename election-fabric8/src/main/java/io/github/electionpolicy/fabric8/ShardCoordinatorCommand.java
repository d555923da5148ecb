package io.github.electionpolicy.fabric8;

/**
 * What {@link ShardCoordinator#step} tells its driver to do, as values, in order.
 */
sealed interface ShardCoordinatorCommand {
  /** Contend for the membership Lease (and renew it, like a leader's, once held). */
  record Join() implements ShardCoordinatorCommand {}

  /** Start shard {@code shard}'s runner: it contends for the shard's Lease and runs its work while it owns it. */
  record Contend(int shard) implements ShardCoordinatorCommand {}

  /**
   * Close shard {@code shard}'s runner: stop its work gracefully, then release its Lease, or, given a {@code successor},
   * hand it over to that member (a runner that holds nothing just ends); it reports
   * {@link ShardCoordinatorInput.ShardStopped}.
   */
  record HandOver(int shard, Why why, java.util.Optional<Successor> successor) implements ShardCoordinatorCommand {
    /** A hand-over that names no successor: the runner releases the Lease. */
    HandOver(int shard, Why why) {
      this(shard, why, java.util.Optional.empty());
    }
  }

  /**
   * The member a released shard goes to by every member's plan, and the resourceVersion of its membership Lease as the
   * view saw it: the runner's clean release writes that member as the holder, with the version as its proof
   * ({@link LeaseProtocol#handOverTo}), so that the successor need not write to take the shard.
   */
  record Successor(String identity, String membershipVersion) {}

  /**
   * A leaver's view shows its own leaving mark: shard {@code shard}'s closing runner (its hand-over held until now, or,
   * if its work did not run, closed at once and maybe still closing) names {@code successor} in its release (the member every other member's plan gives the shard once this
   * replica is out), as a surplus shard's runner does after a join. Only a view that shows the mark names a leaver's
   * successors: the watch delivers changes in the order the server stored them, so that view shows every other
   * member's leaving mark stored before this one's, and names none of those members.
   */
  record Name(int shard, Successor successor) implements ShardCoordinatorCommand {}

  /**
   * A leaver's view shows its own leaving mark, after every {@link Name} of that view: the hand-overs held since
   * {@link AnnounceLeaving} go now (each shard's work stops, then its Lease is handed over or released).
   */
  record MarkSeen() implements ShardCoordinatorCommand {}

  /**
   * Start shard {@code shard}'s runner only to decline the shard, and close it at once: the view shows this replica
   * holding a shard it has no runner for and will not run (it leaves, lost its membership, or holds its share
   * already), as after a hand-over another replica named it for from a view that did not show that yet. The runner
   * releases such a hand-over (with no work started) so that the shard need not wait it out, and otherwise ends
   * ({@link LeaseProtocol#declineHandOvers}); it reports {@link ShardCoordinatorInput.ShardStopped}.
   */
  record Decline(int shard) implements ShardCoordinatorCommand {}

  /**
   * Mark the membership Lease as leaving (renewed as before, with the mark), so that every replica's view counts
   * this one out at once while its shard runners stop: the shards it releases then go to the members that stay.
   */
  record AnnounceLeaving() implements ShardCoordinatorCommand {}

  /** Release the membership Lease and end its elector; it reports {@link ShardCoordinatorInput.MembershipReleased}. */
  record Leave() implements ShardCoordinatorCommand {}

  /** The last command: the coordinator stopped for {@code cause}. */
  record ReportStopped(ShardCoordinatorPhase.StopCause cause) implements ShardCoordinatorCommand {}

  /** Why a shard runner is closed. */
  enum Why {
    /** This replica holds more than its fair share, and membership has settled. */
    SURPLUS,
    /** The runner contended, and the view shows another live member holding the shard. */
    LOST_RACE,
    /** The runner contended for a free shard that the plan no longer gives this replica. */
    NOT_PLANNED,
    /** The coordinator is closing, or stops for good. */
    LEAVING,
    /** The membership Lease was lost. */
    MEMBERSHIP_LOST
  }
}
