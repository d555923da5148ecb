package io.github.electionpolicy.fabric8;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What happened to one replica of a sharded controller, as a value that {@link ShardCoordinator#step} takes in: a
 * call of its API, what its list+watch of the controller's Leases shows, or news of its membership Lease or of one
 * of its shard runners. Every input carries {@code now}, the caller's monotonic time in nanoseconds.
 */
sealed interface ShardCoordinatorInput {
  /** The caller's monotonic time, in nanoseconds, when the input happened. */
  long now();

  /** {@code start()} was called. */
  record Start(long now) implements ShardCoordinatorInput {}

  /**
   * The view of the controller's Leases: the identities of the live members (their membership Leases not expired,
   * judged by the caller on its own clock as {@link LeaseProtocol} judges expiry, and not marked as leaving by
   * {@link ShardCoordinatorCommand.AnnounceLeaving}), and each held shard's holder
   * (its Lease neither free nor expired; a shard that is not a key is free); {@code memberVersions}: the
   * resourceVersion of each live member's membership Lease as seen, what a hand-over to that member names as its proof
   * ({@link LeaseRecord#handOverProof}); a member without one is handed nothing over by name; {@code handOvers}: the
   * held shards whose Lease holds a hand-over (a term written for its holder by the previous one) not renewed since;
   * {@code leavingMembers}: the identities whose membership Lease is held, not expired, and marked as leaving;
   * {@code unconfirmedMembers}: the live members whose membership Lease the caller has not seen change since it first
   * saw it (a first list shows the Lease of a member that ended long before as live for a lease duration: nothing
   * shows it lives).
   */
  record ViewObserved(Set<String> liveMembers, Map<Integer, String> holders, Map<String, String> memberVersions,
      Set<Integer> handOvers, Set<String> leavingMembers, Set<String> unconfirmedMembers, long now)
      implements ShardCoordinatorInput {
    public ViewObserved {
      liveMembers = Set.copyOf(new TreeSet<>(liveMembers));
      holders = Map.copyOf(new TreeMap<>(holders));
      memberVersions = Map.copyOf(new TreeMap<>(memberVersions));
      handOvers = Set.copyOf(new TreeSet<>(handOvers));
      leavingMembers = Set.copyOf(new TreeSet<>(leavingMembers));
      unconfirmedMembers = Set.copyOf(new TreeSet<>(unconfirmedMembers));
    }

    /** A view in which every live member was seen renewing its membership Lease. */
    public ViewObserved(Set<String> liveMembers, Map<Integer, String> holders, Map<String, String> memberVersions,
        Set<Integer> handOvers, Set<String> leavingMembers, long now) {
      this(liveMembers, holders, memberVersions, handOvers, leavingMembers, Set.of(), now);
    }

    /** This view without {@code identity}'s leaving mark: one taken while a list after a failure is reported. */
    public ViewObserved withoutMarkOf(String identity) {
      Set<String> leaving = new TreeSet<>(leavingMembers);
      leaving.remove(identity);
      return new ViewObserved(liveMembers, holders, memberVersions, handOvers, leaving, unconfirmedMembers, now);
    }

    /** Whether a member of {@code live} but {@code self} is unconfirmed. */
    public boolean unconfirmedAmong(Set<String> live, String self) {
      return unconfirmedMembers.stream().anyMatch(member -> !member.equals(self) && live.contains(member));
    }

    /** A view in which no member is marked as leaving. */
    public ViewObserved(Set<String> liveMembers, Map<Integer, String> holders, Map<String, String> memberVersions,
        Set<Integer> handOvers, long now) {
      this(liveMembers, holders, memberVersions, handOvers, Set.of(), now);
    }

    /** A view with the membership Leases' resourceVersions and no hand-over in it. */
    public ViewObserved(Set<String> liveMembers, Map<Integer, String> holders, Map<String, String> memberVersions,
        long now) {
      this(liveMembers, holders, memberVersions, Set.of(), Set.of(), now);
    }

    /** A view with no membership Lease's resourceVersion and no hand-over: nothing is handed over by name. */
    public ViewObserved(Set<String> liveMembers, Map<Integer, String> holders, long now) {
      this(liveMembers, holders, Map.of(), Set.of(), Set.of(), now);
    }
  }

  /** The membership Lease was taken: this replica is a member. */
  record MembershipHeld(long now) implements ShardCoordinatorInput {}

  /** The membership Lease was lost (not renewed in time) or could not be taken: its elector ended. */
  record MembershipLost(long now) implements ShardCoordinatorInput {}

  /** After {@link ShardCoordinatorCommand.Leave}: the membership Lease was released and its elector ended. */
  record MembershipReleased(long now) implements ShardCoordinatorInput {}

  /** Shard {@code shard}'s runner contends for its Lease (it started, or lost a term and contends again). */
  record ShardContending(int shard, long now) implements ShardCoordinatorInput {}

  /** Shard {@code shard}'s runner holds its Lease under the fencing token {@code token}; its work runs. */
  record ShardOwned(int shard, long token, long now) implements ShardCoordinatorInput {}

  /**
   * Shard {@code shard}'s runner stopped: {@code released} when its work stopped cleanly and its Lease was released
   * (or never held); otherwise its Lease is left to expire because its work may still run.
   */
  record ShardStopped(int shard, boolean released, long now) implements ShardCoordinatorInput {}

  /** {@code close()} was called. */
  record CloseRequested(long now) implements ShardCoordinatorInput {}

  /** Time passed: a settle time may have run out. */
  record Tick(long now) implements ShardCoordinatorInput {}
}
