package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import java.time.Instant;
import java.util.function.Consumer;

/**
 * The API server's view of the one Lease, with the semantics the protocol relies on: every write is a
 * compare-and-set on the resourceVersion (a stale one gets 409), create on an existing Lease gets 409, update
 * on a missing one gets 404, and each create starts a new incarnation (a new uid). Every change is handed to
 * {@code onChange} so the simulator can fan it out to the open watches.
 *
 * <p>Time and the network live in the simulator: this class answers at once. Not thread-safe (one thread).
 */
final class SimApiServer {

  private final Consumer<LeaseRecord> onChange;
  private LeaseRecord lease;
  private long incarnation;
  private long resourceVersion;
  // The resourceVersion of the Lease as another client last wrote it; -1 once a replica wrote it since or it was
  // deleted.
  private long foreignVersion = -1;

  SimApiServer(Consumer<LeaseRecord> onChange) {
    this.onChange = onChange;
  }

  /** The Lease as stored ({@code null}: it does not exist). */
  LeaseRecord current() {
    return lease;
  }

  /**
   * The resourceVersion of the current Lease if another client (not a replica) wrote it last, else -1: a record no
   * replica wrote, which a replica past its renew deadline does not release.
   */
  long foreignVersion() {
    return foreignVersion;
  }

  /** The uid of the current (or last) Lease object, counted from 1; 0 before the first create. */
  long incarnation() {
    return incarnation;
  }

  Answer get() {
    return lease == null ? new Answer.Missing() : new Answer.Found(lease);
  }

  Answer create(LeaseRecord record) {
    if (lease != null) {
      return new Answer.Failed(FailureKind.CONFLICT, "409 AlreadyExists");
    }
    incarnation++;
    foreignVersion = -1;
    return store(record);
  }

  Answer update(LeaseRecord record) {
    if (lease == null) {
      return new Answer.Failed(FailureKind.NOT_FOUND, "404 NotFound");
    }
    if (!lease.resourceVersion().equals(record.resourceVersion())) {
      return new Answer.Failed(FailureKind.CONFLICT, "409 Conflict: stale resourceVersion");
    }
    foreignVersion = -1;
    return store(record);
  }

  /** {@code kubectl delete lease}. */
  void delete() {
    if (lease != null) {
      lease = null;
      foreignVersion = -1;
      onChange.accept(null);
    }
  }

  /** Another client moves renewTime, keeping the holder and term: the holder's next write conflicts. */
  void foreignBumpRenewTime(Instant renewTime) {
    if (lease != null) {
      storeForeign(new LeaseRecord(lease.holder(), lease.leaseDurationSeconds(), lease.acquireTime(), renewTime,
          lease.leaseTransitions(), lease.resourceVersion()));
    }
  }

  /** Another client names itself holder, promising {@code seconds}; keeps leaseTransitions. */
  void foreignEditHolder(String holder, int seconds, Instant now) {
    if (lease != null) {
      storeForeign(new LeaseRecord(holder, seconds, now, now, lease.leaseTransitions(), lease.resourceVersion()));
    }
  }

  /** Another client (an operator) sets leaseTransitions, higher or lower, keeping the rest. */
  void foreignSetTransitions(int transitions) {
    if (lease != null) {
      storeForeign(new LeaseRecord(lease.holder(), lease.leaseDurationSeconds(), lease.acquireTime(),
          lease.renewTime(), transitions, lease.resourceVersion()));
    }
  }

  private void storeForeign(LeaseRecord record) {
    store(record);
    foreignVersion = resourceVersion;
  }

  private Answer store(LeaseRecord record) {
    resourceVersion++;
    lease = record.withResourceVersion(Long.toString(resourceVersion));
    onChange.accept(lease);
    return new Answer.Written(lease);
  }
}
