package io.github.electionpolicy.fabric8;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One replica's view of a sharded controller's Leases, built from its one list and watch by {@link
 * ShardLeases#LABEL} and judged on its own monotonic clock, as {@link LeaseProtocol} judges a Lease: a Lease is held
 * until its holder's lease duration has passed since this replica saw its content change (a renewal moves
 * renewTime, so a live holder's Lease keeps changing); the clocks of other replicas and the renewTime they wrote
 * are never compared with this one's. {@link #view} gives {@link ShardCoordinator} what it takes in: the live
 * members (by the identity holding each membership Lease, not by the Lease's name), without those marked as
 * leaving, those of them whose Lease it has not seen change since it first saw it (unconfirmed: a first list shows
 * the Lease of a member that may have ended long before as live for a lease duration), and each held shard's holder;
 * {@link #nextExpiry} says when that may change with no event.
 *
 * <p>A shard's Lease deleted while held (by hand: the runners never delete a shard's Lease) still counts as held
 * until its holder's lease duration has passed, as a follower judges a deleted Lease's last holder; any other deleted
 * Lease (a released one, a member's) is gone at once. An event older than a change already seen does not date the
 * change back (a re-list after a reconnect that shows a Lease as it was keeps the time its content was first seen).
 * Pure; not thread-safe (the driver's loop).
 */
final class ShardLeaseView {

  /**
   * One listed Lease as its watch reported it: {@code leaving} when it is a membership Lease marked as leaving
   * (the member stops counting itself in before its shards stop; docs/architecture.md); {@code bare} when its
   * metadata holds nothing a shard runner's own write would not (no annotation, owner reference, finalizer or label
   * but the controller's), so a write made from the record alone, without a read, loses nothing of it.
   */
  record Listed(String name, LeaseRecord record, boolean leaving, boolean bare) {
    Listed {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(record, "record");
    }

    /** A Lease with nothing in its metadata but what the runners write (the simulation's). */
    Listed(String name, LeaseRecord record, boolean leaving) {
      this(name, record, leaving, true);
    }
  }

  // deleted: the Lease was deleted while held (by hand: the runners never delete a held Lease), kept until its holder's
  // lease duration has passed since its content was first seen so; renewed: its content was seen to change since this
  // view first saw the Lease (a write after the first sighting: its writer lived then).
  private record Seen(Listed listed, long changedNanos, boolean deleted, boolean renewed) {
    Seen(Listed listed, long changedNanos, boolean renewed) {
      this(listed, changedNanos, false, renewed);
    }
  }

  private final ShardLeases leases;
  private final long defaultDurationNanos;
  private final Map<String, Seen> seen = new HashMap<>();
  // The highest leaseTransitions each shard's Lease showed, kept after it was deleted (by hand) and forgotten.
  private final Map<String, Integer> highest = new HashMap<>();

  /** A view of {@code leases}; a Lease without a positive duration counts {@code defaultDurationNanos}. */
  ShardLeaseView(ShardLeases leases, long defaultDurationNanos) {
    this.leases = Objects.requireNonNull(leases, "leases");
    if (defaultDurationNanos <= 0) {
      throw new IllegalArgumentException("defaultDurationNanos is " + defaultDurationNanos + "; expected > 0");
    }
    this.defaultDurationNanos = defaultDurationNanos;
  }

  /** The whole list, as listed at {@code now} (a first list, or a re-list after the watch reconnected). */
  void listed(List<Listed> all, long now) {
    Map<String, Listed> byName = new HashMap<>();
    for (Listed listed : all) {
      byName.put(listed.name(), listed);
    }
    for (String name : new java.util.ArrayList<>(seen.keySet())) {
      if (!byName.containsKey(name)) {
        deleted(name);
      }
    }
    byName.values().forEach(listed -> changed(listed, now));
  }

  /** A watch event at {@code now}: the Lease added or modified. */
  void changed(Listed listed, long now) {
    counted(listed.name(), listed.record().transitions());
    Seen found = seen.get(listed.name());
    Seen before = found == null || found.deleted() ? null : found;
    boolean same = before != null && before.listed().leaving() == listed.leaving()
        && before.listed().record().sameContent(listed.record());
    if (!same) {
      long changedAt = before == null || now - before.changedNanos() > 0 ? now : before.changedNanos();
      seen.put(listed.name(), new Seen(listed, changedAt, before != null));
    } else {
      // The same content, since when it was first seen so; the Lease as it is now (its resourceVersion and metadata:
      // what a take without a read writes over).
      seen.put(listed.name(), new Seen(listed, before.changedNanos(), before.renewed()));
    }
  }

  /**
   * A Lease as last seen, when its content was first seen so, on the view's clock, and whether its metadata is
   * {@link Listed#bare bare}.
   */
  record Sighting(LeaseRecord record, long changedNanos, boolean bare) {}

  /**
   * The highest {@code leaseTransitions} the shard's Lease {@code name} showed, whether or not it is listed now
   * (deleted by hand, its tokens go on above it once it is created again); -1 if none.
   */
  long highestTransitions(String name) {
    Integer count = highest.get(name);
    return count == null ? -1 : count;
  }

  /**
   * A term this replica's own runner took in the shard's Lease {@code name}, under {@code transitions}: counted in
   * {@link #highestTransitions} as a count the list and watch showed, which may not have shown it yet (it lags behind
   * the runner's own calls, or re-listed after the Lease was deleted), so that a later runner of the shard, after a
   * deletion by hand, does not write that token again.
   */
  void took(String name, int transitions) {
    counted(name, transitions);
  }

  /** Remembers {@code transitions} as the highest count of {@code name}'s if it is a shard's Lease and higher. */
  private void counted(String name, int transitions) {
    if (leases.parse(name) instanceof ShardLeases.Kind.Shard) {
      highest.merge(name, transitions, Math::max);
    }
  }

  /** The Lease {@code name} as last seen, if it is listed. */
  java.util.Optional<Sighting> sighting(String name) {
    Seen s = seen.get(name);
    return s == null || s.deleted() ? java.util.Optional.empty()
        : java.util.Optional.of(new Sighting(s.listed().record(), s.changedNanos(), s.listed().bare()));
  }

  /** The Lease {@code name} as last seen, if it is listed and a hand-over to {@code identity} (it has the proof). */
  java.util.Optional<Sighting> handOverTo(String name, String identity) {
    return sighting(name).filter(seen -> seen.record() != null && seen.record().handOverProof() != null
        && seen.record().heldBy(identity));
  }

  /**
   * A watch event: the Lease {@code name} was deleted. A shard's deleted while held still counts as held by its
   * holder until the holder's lease duration has passed since its content was first seen so, as a follower judges a
   * Lease whose last holder it saw (LeaseProtocol): the holder hears of the deletion only when its watch or its next
   * renewal says so, and its work runs until it stopped; counted free at once, the shard would be taken meanwhile.
   */
  void deleted(String name) {
    Seen s = seen.get(name);
    if (s == null || s.deleted()) {
      return;
    }
    if (s.listed().record().holder() == null || !(leases.parse(name) instanceof ShardLeases.Kind.Shard)) {
      // Released, or not a shard's: a member's Lease decides no work (its closed owner deletes it once released).
      seen.remove(name);
    } else {
      seen.put(name, new Seen(s.listed(), s.changedNanos(), true, s.renewed()));
    }
  }

  /** What the coordinator takes in at {@code now}. */
  ShardCoordinatorInput.ViewObserved view(long now) {
    seen.values().removeIf(s -> s.deleted() && now - expiry(s) >= 0);
    Set<String> members = new TreeSet<>();
    Map<Integer, String> holders = new TreeMap<>();
    Map<String, String> versions = new TreeMap<>();
    Set<Integer> handOvers = new TreeSet<>();
    Set<String> leaving = new TreeSet<>();
    Set<String> unconfirmed = new TreeSet<>();
    for (Seen s : seen.values()) {
      LeaseRecord record = s.listed().record();
      if (record.holder() == null || now - expiry(s) >= 0) {
        continue;
      }
      ShardLeases.Kind kind = leases.parse(s.listed().name());
      if (kind instanceof ShardLeases.Kind.Shard shard) {
        holders.put(shard.shard(), record.holder());
        if (record.handOverProof() != null) {
          handOvers.add(shard.shard());
        }
      } else if (kind instanceof ShardLeases.Kind.Member && s.listed().leaving()) {
        leaving.add(record.holder());
      } else if (kind instanceof ShardLeases.Kind.Member) {
        members.add(record.holder());
        if (!s.renewed()) {
          unconfirmed.add(record.holder());
        }
        if (record.resourceVersion() != null && s.listed().name().equals(leases.memberLease(record.holder()))) {
          versions.put(record.holder(), record.resourceVersion());
        }
      }
    }
    return new ShardCoordinatorInput.ViewObserved(members, holders, versions, handOvers, leaving, unconfirmed, now);
  }

  /** When the next held Lease of the view expires with no event, if one is held after {@code now}. */
  java.util.OptionalLong nextExpiry(long now) {
    long next = 0;
    boolean any = false;
    for (Seen s : seen.values()) {
      if (s.listed().record().holder() == null || leases.parse(s.listed().name()) instanceof ShardLeases.Kind.Other) {
        continue;
      }
      long at = expiry(s);
      if (at - now > 0 && (!any || at - next < 0)) {
        next = at;
        any = true;
      }
    }
    return any ? java.util.OptionalLong.of(next) : java.util.OptionalLong.empty();
  }

  private long expiry(Seen s) {
    Integer seconds = s.listed().record().leaseDurationSeconds();
    return s.changedNanos() + (seconds == null || seconds <= 0 ? defaultDurationNanos : seconds * 1_000_000_000L);
  }
}
