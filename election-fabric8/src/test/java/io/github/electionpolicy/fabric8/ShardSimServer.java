package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The API server of the sharding simulation: many Leases of one namespace, each write a compare-and-set on the
 * Lease's resourceVersion (a stale one gets 409, a create of an existing Lease 409, an update of a missing one 404),
 * the resourceVersion one counter for the whole server, as etcd's revision is. A write's annotations are merged over
 * the stored ones (the keys it carries set, the others kept), as {@link LeaseRecords#lease} writes them: a mark
 * stays until a write sets its key again. Every change goes to {@code onChange}, which the simulation fans out to
 * the open watches (the runners' watches of one Lease, the replicas' list and watch by label).
 *
 * <p>Time and the network live in the simulation: this class answers at once. Not thread-safe (one thread).
 */
final class ShardSimServer {

  /** A Lease as stored: its record (with its resourceVersion), its annotations, and that resourceVersion. */
  record Stored(String name, LeaseRecord record, Map<String, String> annotations, long version) {
    boolean leaving() {
      return "true".equals(annotations.get(ShardLeases.LEAVING));
    }

    ShardLeaseView.Listed listed() {
      // Bare unless a user put an annotation of their own on it (the leaving mark is the runners' own).
      return new ShardLeaseView.Listed(name, record, leaving(),
          annotations.keySet().stream().allMatch(ShardLeases.LEAVING::equals));
    }
  }

  /** Where every change goes. */
  interface Changes {
    void changed(Stored stored);

    /** {@code removed} was deleted, at the server's revision {@code version}. */
    void deleted(Stored removed, long version);
  }

  private final Changes onChange;
  private final TreeMap<String, Stored> leases = new TreeMap<>();
  private long version;
  // The deleted Leases' names and the revision of their delete: what a re-list tells a view that missed the event.
  private final TreeMap<String, Long> tombstones = new TreeMap<>();

  ShardSimServer(Changes onChange) {
    this.onChange = onChange;
  }

  /** Every Lease, by name. */
  Map<String, Stored> all() {
    return leases;
  }

  Stored stored(String name) {
    return leases.get(name);
  }

  Answer get(String name) {
    Stored stored = leases.get(name);
    return stored == null ? new Answer.Missing() : new Answer.Found(stored.record());
  }

  Answer create(String name, LeaseRecord record, Map<String, String> annotations) {
    if (leases.containsKey(name)) {
      return new Answer.Failed(FailureKind.CONFLICT, "409 AlreadyExists");
    }
    return store(name, record, new HashMap<>(), annotations);
  }

  Answer update(String name, LeaseRecord record, Map<String, String> annotations) {
    Stored stored = leases.get(name);
    if (stored == null) {
      return new Answer.Failed(FailureKind.NOT_FOUND, "404 NotFound");
    }
    if (!stored.record().resourceVersion().equals(record.resourceVersion())) {
      return new Answer.Failed(FailureKind.CONFLICT, "409 Conflict: stale resourceVersion");
    }
    return store(name, record, new HashMap<>(stored.annotations()), annotations);
  }

  /**
   * Deletes the Lease if it is still {@code released} (its resourceVersion the precondition, as DeleteOptions'):
   * {@link Answer.Missing} once deleted, a 409 if anyone wrote it since, a 404 if it is gone.
   */
  Answer delete(String name, LeaseRecord released) {
    Stored stored = leases.get(name);
    if (stored == null) {
      return new Answer.Failed(FailureKind.NOT_FOUND, "404 NotFound");
    }
    if (!stored.record().resourceVersion().equals(released.resourceVersion())) {
      return new Answer.Failed(FailureKind.CONFLICT, "409 Conflict: precondition failed: resourceVersion");
    }
    leases.remove(name);
    version++;
    tombstones.put(name, version);
    onChange.deleted(stored, version);
    return new Answer.Missing();
  }

  /** Deletes the Lease whatever it holds, as {@code kubectl delete lease} does; false if there is none. */
  boolean deleteByHand(String name) {
    Stored stored = leases.remove(name);
    if (stored == null) {
      return false;
    }
    version++;
    tombstones.put(name, version);
    onChange.deleted(stored, version);
    return true;
  }

  /** The deleted Leases not created again since, with the revision of their delete. */
  Map<String, Long> tombstones() {
    Map<String, Long> gone = new TreeMap<>(tombstones);
    gone.keySet().removeAll(leases.keySet());
    return gone;
  }

  private Answer store(String name, LeaseRecord record, Map<String, String> merged, Map<String, String> written) {
    merged.putAll(written);
    version++;
    Stored stored = new Stored(name, record.withResourceVersion(Long.toString(version)), Map.copyOf(merged), version);
    leases.put(name, stored);
    onChange.changed(stored);
    return new Answer.Written(stored.record());
  }
}
