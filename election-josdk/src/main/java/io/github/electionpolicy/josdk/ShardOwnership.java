package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.fabric8.WriteGate;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which shards this replica owns, under which term, and how many reconciliations of each run now: what a {@link
 * ShardedOperator}'s gate asks before a reconciliation begins, and what a shard's stop waits on.
 *
 * <p>A reconciliation {@linkplain #enter enters} its resource's shard only while the shard is owned under a valid
 * term, and {@linkplain #exit exits} when JOSDK is done with it (its own writes after the reconciler included). {@link
 * #release} takes the term away first, so no reconciliation of the shard enters afterwards, and then waits until
 * those that entered before have exited. Thread-safe: each shard's state is guarded by its own monitor.
 */
final class ShardOwnership {

  private static final Logger LOG = LoggerFactory.getLogger(ShardedOperator.class);
  /** How often a release that is still waiting for reconciliations says so. */
  static final Duration STILL_WAITING_EVERY = Duration.ofSeconds(5);

  /** One shard's owner state; guarded by itself. */
  private static final class Slot {
    LeadershipTerm term;
    KubernetesClient gated;
    int running;
  }

  /**
   * A reconciliation that entered a shard: its shard and term, or none when the shard is not owned here; and the
   * resource it is of, whose uid {@link ShardFence} makes that resource's writes conditional on (null: none, the
   * resource has no uid).
   */
  record Entry(int shard, LeadershipTerm term, UidPrecondition primary) {
    boolean owned() {
      return term != null;
    }
  }

  private final Shards shards;
  private final KubernetesClient client;
  // Opens a term's write gate on the client: WriteGate's; a test's to count the gates opened and closed.
  private final BiFunction<KubernetesClient, LeadershipTerm, KubernetesClient> gates;
  private final Slot[] slots;

  ShardOwnership(Shards shards, KubernetesClient client) {
    this(shards, client, WriteGate::gate);
  }

  ShardOwnership(Shards shards, KubernetesClient client,
      BiFunction<KubernetesClient, LeadershipTerm, KubernetesClient> gates) {
    this.shards = shards;
    this.client = client;
    this.gates = gates;
    this.slots = new Slot[shards.count()];
    for (int i = 0; i < slots.length; i++) {
      slots[i] = new Slot();
    }
  }

  Shards shards() {
    return shards;
  }

  /**
   * Makes {@code shard} this replica's under {@code term}. The term's write gate ({@link #clientFor}) is opened later,
   * by {@link #openGate} or at the first {@code clientFor}: opening one builds two fabric8 clients (up to tens of
   * milliseconds on a busy machine), which a move's first reconciliation need not wait for.
   */
  void own(int shard, LeadershipTerm term) {
    Slot slot = slot(shard);
    synchronized (slot) {
      if (slot.term != null) {
        throw new IllegalStateException("start(" + shard + ", " + term + ") while shard " + shard + " is owned under "
            + slot.term + ": stop(" + shard + ") it first");
      }
      slot.term = term;
    }
  }

  /** Opens the write gate of {@code shard}'s term {@code term} unless it is open already or the term changed. */
  void openGate(int shard, LeadershipTerm term) {
    gateOf(slot(shard), term);
  }

  /**
   * Takes {@code shard} away, then returns once none of its reconciliations runs any more, however long that takes;
   * not cut short by an interrupt, which is kept for the caller.
   */
  void release(int shard) {
    Slot slot = slot(shard);
    KubernetesClient gated;
    boolean interrupted = false;
    synchronized (slot) {
      slot.term = null;
      long begun = System.nanoTime();
      while (slot.running > 0) {
        try {
          slot.wait(STILL_WAITING_EVERY.toMillis());
        } catch (InterruptedException e) {
          interrupted = true;
        }
        if (slot.running > 0 && System.nanoTime() - begun >= STILL_WAITING_EVERY.toNanos()) {
          LOG.warn("{} reconciliation(s) of shard {} still run {} ms after its stop began; still waiting, since the "
              + "shard may move only once none runs", slot.running, shard,
              TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begun));
        }
      }
      gated = slot.gated;
      slot.gated = null;
    }
    if (gated != null) {
      gated.close();
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * A reconciliation of {@code resource} begins: it counts as running in the resource's shard if the shard is owned
   * under a valid term. A resource without a uid, which has no shard, is never owned.
   */
  Entry enter(HasMetadata resource) {
    int shard;
    try {
      shard = shards.shardOf(resource);
    } catch (IllegalArgumentException noUid) {
      return new Entry(-1, null, null);
    }
    UidPrecondition primary = UidPrecondition.of(resource);
    Slot slot = slots[shard];
    synchronized (slot) {
      if (slot.term == null || !slot.term.isValid()) {
        return new Entry(shard, null, primary);
      }
      slot.running++;
      return new Entry(shard, slot.term, primary);
    }
  }

  /** The reconciliation that {@code entry} began has ended. */
  void exit(Entry entry) {
    if (!entry.owned()) {
      return;
    }
    Slot slot = slots[entry.shard()];
    synchronized (slot) {
      if (--slot.running == 0) {
        slot.notifyAll();
      }
    }
  }

  /** Whether the shard {@code entry} entered is still owned here under the term it entered with. */
  boolean holds(Entry entry) {
    if (!entry.owned()) {
      return false;
    }
    Slot slot = slots[entry.shard()];
    synchronized (slot) {
      return slot.term == entry.term();
    }
  }

  /** The term of {@code resource}'s shard while it is owned here under a valid term. */
  Optional<LeadershipTerm> termOf(HasMetadata resource) {
    Slot slot = slots[shards.shardOf(resource)];
    synchronized (slot) {
      return slot.term != null && slot.term.isValid() ? Optional.of(slot.term) : Optional.empty();
    }
  }

  /**
   * The write-gated client of {@code resource}'s shard's term while the shard is owned here (no longer once a stop of
   * it began), opened now if it was not yet.
   */
  Optional<KubernetesClient> clientFor(HasMetadata resource) {
    Slot slot = slots[shards.shardOf(resource)];
    LeadershipTerm term;
    synchronized (slot) {
      if (slot.term == null || slot.gated != null) {
        return Optional.ofNullable(slot.term == null ? null : slot.gated);
      }
      term = slot.term;
    }
    return Optional.ofNullable(gateOf(slot, term));
  }

  /**
   * The gate of {@code slot}'s term {@code term}, opened outside the slot's monitor (so that the shard's reconciliations
   * enter and exit meanwhile) unless one is open; null if the slot's term is no longer {@code term}. Of two calls that
   * open one at once, the first to return keeps its gate and the other closes its own.
   */
  private KubernetesClient gateOf(Slot slot, LeadershipTerm term) {
    synchronized (slot) {
      if (slot.term != term) {
        return null;
      }
      if (slot.gated != null) {
        return slot.gated;
      }
    }
    KubernetesClient opened = gates.apply(client, term);
    KubernetesClient kept;
    synchronized (slot) {
      if (slot.term == term && slot.gated == null) {
        slot.gated = opened;
        return opened;
      }
      kept = slot.term == term ? slot.gated : null;
    }
    opened.close();
    return kept;
  }

  private Slot slot(int shard) {
    if (shard < 0 || shard >= slots.length) {
      throw new IllegalArgumentException("shard is " + shard + "; expected 0 to " + (slots.length - 1));
    }
    return slots[shard];
  }
}
