package io.github.electionpolicy.fabric8;

import java.time.Instant;
import java.util.Objects;

/**
 * The part of a {@code coordination.k8s.io/v1} Lease that the protocol reads and writes, as a plain value
 * with no fabric8 type in it: the holder ({@code null} when free), the duration the holder promised, the
 * term's acquire time and transitions count, the last renewal and the resourceVersion every write is
 * conditional on ({@code null} in a record still to be created).
 *
 * <p>Two records are the same observation exactly when {@link #sameContent} says so; the resourceVersion is
 * left out, because a write that changes nothing the protocol reads still moves it.
 */
record LeaseRecord(String holder, Integer leaseDurationSeconds, Instant acquireTime, Instant renewTime,
    Integer leaseTransitions, String resourceVersion) {

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
        && Objects.equals(leaseTransitions, other.leaseTransitions);
  }

  LeaseRecord withResourceVersion(String version) {
    return new LeaseRecord(holder, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions, version);
  }
}
