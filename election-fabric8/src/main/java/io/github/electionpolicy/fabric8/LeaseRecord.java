package io.github.electionpolicy.fabric8;

import java.time.Instant;
import java.util.Objects;

/**
 * The part of a {@code coordination.k8s.io/v1} Lease that the protocol reads and writes, as a plain value
 * with no fabric8 type in it: the holder ({@code null} when free), the duration the holder promised, the
 * term's acquire time and transitions count, the last renewal and the resourceVersion every write is
 * conditional on ({@code null} in a record still to be created).
 *
 * <p>{@code handOverProof} is set only in a term that a sharded runner's owner wrote for the replica it handed the
 * shard to (a <em>hand-over</em>): the resourceVersion of that successor's membership Lease as the old owner last saw
 * it, kept in the Lease's annotation {@link LeaseRecords#HAND_OVER_PROOF}. The successor dates the term from the send
 * time of its own write that made that version ({@link LeaseProtocol}); every other write leaves it out.
 *
 * <p>Two records are the same observation exactly when {@link #sameContent} says so; the resourceVersion is
 * left out, because a write that changes nothing the protocol reads still moves it.
 */
record LeaseRecord(String holder, Integer leaseDurationSeconds, Instant acquireTime, Instant renewTime,
    Integer leaseTransitions, String resourceVersion, String handOverProof) {

  /** A record that is no hand-over: every write but a hand-over's. */
  LeaseRecord(String holder, Integer leaseDurationSeconds, Instant acquireTime, Instant renewTime,
      Integer leaseTransitions, String resourceVersion) {
    this(holder, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions, resourceVersion, null);
  }

  LeaseRecord {
    if (holder != null && holder.isBlank()) {
      holder = null;
    }
  }

  /** The transitions count, 0 when unset. */
  int transitions() {
    return leaseTransitions == null ? 0 : leaseTransitions;
  }

  /** Whether this record names {@code identity} as holder. */
  boolean heldBy(String identity) {
    return identity.equals(holder);
  }

  /** Whether both records belong to the same term: renewals and foreign bumps keep both fields. */
  boolean sameTerm(LeaseRecord other) {
    return other != null && Objects.equals(acquireTime, other.acquireTime)
        && Objects.equals(leaseTransitions, other.leaseTransitions);
  }

  /** Whether the two records say the same, resourceVersion aside. */
  boolean sameContent(LeaseRecord other) {
    return other != null && Objects.equals(holder, other.holder)
        && Objects.equals(leaseDurationSeconds, other.leaseDurationSeconds)
        && Objects.equals(acquireTime, other.acquireTime) && Objects.equals(renewTime, other.renewTime)
        && Objects.equals(leaseTransitions, other.leaseTransitions)
        && Objects.equals(handOverProof, other.handOverProof);
  }

  LeaseRecord withResourceVersion(String version) {
    return new LeaseRecord(holder, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions, version,
        handOverProof);
  }
}
