package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One replica's plan for the shards of a controller, from its view: the shard count, the live members, itself, and
 * who holds each shard. Pure: no I/O, no clock, no threads; the same view gives the same plan, whatever order its
 * collections iterate in. The Lease of each shard still decides who owns it: a plan says what to try, and two
 * replicas that plan from different views can both try for a shard, one of them in vain.
 *
 * <p>The rules, with {@code M} live members and {@code S} shards, {@code q = S / M}, {@code r = S % M}:
 * <ol>
 *   <li><b>Quotas.</b> Every live member's quota is {@code q}, and {@code q + 1} for {@code r} of them: those that
 *     hold the most shards now, ties to the smaller identity (by {@link String#compareTo}). Favouring the members
 *     that hold more is what keeps a join from moving a shard between two old members: in a fair state the members
 *     that must give up a shard for the newcomer are exactly the ones that held one more.</li>
 *   <li><b>Keep and hand over.</b> A member keeps its shards up to its quota and hands over the rest (stop the
 *     shard's work, then hand its Lease over); it keeps those it prefers by rendezvous weight. A member not in the
 *     live set (leaving, or not yet joined) hands over everything it holds and takes nothing: ownership follows
 *     membership.</li>
 *   <li><b>Free shards.</b> A shard is free only when nobody holds it. A shard held by someone outside the live set
 *     is not free: that holder may still be running its work, and its Lease (released, or expired after the lease
 *     duration) decides when the shard is free. Nobody takes a shard from a live member.</li>
 *   <li><b>Who takes which.</b> Every member assigns all free shards of the view the same way and takes only its own:
 *     in ascending shard order, each free shard goes to the member, among those still below their quota, with the
 *     highest rendezvous weight for it (ties to the smaller identity). So two members planning from the same view
 *     never try for the same shard, and a shard tends to go to the same member across nearby views.</li>
 * </ol>
 *
 * <p><b>Convergence</b> (proved by {@code ShardPlannerProperties} over generated views): let every member act on
 * its plan in rounds, each round from the view all share (hand-overs done, takes won). From any view, ownership is
 * fair (every live member holds {@code q} or {@code q + 1} shards, none free) after at most 2 rounds, whatever
 * {@code S} and {@code M}, or 1 round after the last shard of a departed holder became free, whichever is later.
 * Round 1 brings every member to at most its quota (and nobody exceeds it later, since at most {@code r} members can
 * then hold {@code q + 1}, and they rank first); what remains free then equals what the members lack, and round 2
 * fills it. A join (from a fair state) moves only shards from old members to the newcomer, as many as the newcomer
 * gets; a graceful leave (the leaver hands everything over) and a crash (its Leases expire) move only the leaver's
 * shards.
 *
 * <p>Stateless and thread-safe.
 */
final class ShardPlanner {

  /**
   * Deliberate one-line defects of the planner, each a slip a maintainer could make, for the tests' broken variants:
   * the properties must catch every one. Production code uses {@link ShardPlanner#FAIR} ({@link #NONE}).
   */
  enum Flaw {
    /** The real planner. */
    NONE,
    /** A member takes one shard more than it lacks (an off-by-one), and so may exceed {@code ceil(S/M)}. */
    TAKES_ONE_PAST_QUOTA,
    /** A member below its quota takes a shard from a live member above its own quota instead of waiting for it. */
    TAKES_FROM_LIVE_MEMBER,
    /** A shard held by someone outside the live set counts as free (the departed holder may still run it). */
    TAKES_FROM_DEPARTED_HOLDER,
    /** Each member below its quota takes the lowest free shards, without the shared assignment. */
    NO_SHARED_ASSIGNMENT,
    /** The {@code q + 1} quotas go to the smallest identities, whatever they hold (a join then moves old shards). */
    CEIL_BY_IDENTITY_ONLY,
    /** Quota ties are broken by the order the live members were given in, not by identity. */
    TIES_BY_INPUT_ORDER,
  }

  /** The planner. */
  static final ShardPlanner FAIR = new ShardPlanner(Flaw.NONE);

  private final Flaw flaw;

  private ShardPlanner(Flaw flaw) {
    this.flaw = flaw;
  }

  /** A planner with a deliberate defect, for tests. */
  static ShardPlanner withFlaw(Flaw flaw) {
    return new ShardPlanner(Objects.requireNonNull(flaw, "flaw"));
  }

  /**
   * One member's plan: shards in ascending order. {@code keep} and {@code handOver} together are what the member
   * holds in the view; {@code take} are free shards of the view.
   *
   * @param quota the member's fair share, {@code q} or {@code q + 1}; 0 for a member not in the live set
   */
  record Plan(List<Integer> keep, List<Integer> handOver, List<Integer> take, int quota) {
    Plan {
      keep = List.copyOf(keep);
      handOver = List.copyOf(handOver);
      take = List.copyOf(take);
    }

    /** What the member holds once the plan is carried out and every take is won. */
    int heldAfter() {
      return keep.size() + take.size();
    }
  }

  /**
   * Plans for {@code self}.
   *
   * @param shardCount {@code S}, at least 1
   * @param liveMembers the identities of the live members (the view's membership), self included once it has joined
   * @param self this member's identity
   * @param owners each held shard's holder; a shard that is not a key is free
   * @return the plan
   * @throws IllegalArgumentException when a shard of {@code owners} is not in {@code [0, shardCount)}
   */
  Plan plan(int shardCount, Collection<String> liveMembers, String self, Map<Integer, String> owners) {
    View view = new View(shardCount, liveMembers, owners, flaw);
    List<Integer> mine = view.heldBy(self);
    if (!view.live.contains(self)) {
      return new Plan(List.of(), mine, List.of(), 0);
    }
    Map<String, Integer> quotas = view.quotas();
    int quota = quotas.get(self);
    List<Integer> byPreference = new ArrayList<>(mine);
    byPreference.sort(preferredFirst(self));
    List<Integer> keep = sorted(byPreference.subList(0, Math.min(quota, byPreference.size())));
    List<Integer> handOver = sorted(byPreference.subList(keep.size(), byPreference.size()));
    return new Plan(keep, handOver, view.takesOf(self, quotas), quota);
  }

  /** Every live member's quota in a view: {@code q} or {@code q + 1}, summing to {@code S}. */
  Map<String, Integer> quotas(int shardCount, Collection<String> liveMembers, Map<Integer, String> owners) {
    return new View(shardCount, liveMembers, owners, flaw).quotas();
  }

  /**
   * A member's rendezvous weight for a shard: a 64-bit mix of the member's FNV-1a hash and the shard, the same in
   * every JVM. Higher is preferred.
   */
  static long weight(String member, int shard) {
    long z = Shards.hash(member) + 0x9e3779b97f4a7c15L * (shard + 1L);
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  private static Comparator<Integer> preferredFirst(String member) {
    return Comparator.<Integer>comparingLong(shard -> weight(member, shard)).reversed()
        .thenComparing(Comparator.naturalOrder());
  }

  private static List<Integer> sorted(List<Integer> shards) {
    List<Integer> copy = new ArrayList<>(shards);
    copy.sort(null);
    return copy;
  }

  /** The view, checked and in a fixed order: members sorted by identity, shards by number. */
  private static final class View {
    final int shardCount;
    final List<String> liveInOrder;
    final TreeSet<String> live;
    final TreeMap<Integer, String> owners;
    final Flaw flaw;

    View(int shardCount, Collection<String> liveMembers, Map<Integer, String> owners, Flaw flaw) {
      if (shardCount < 1) {
        throw new IllegalArgumentException("shardCount=" + shardCount + " is not valid: accepted values are 1 or more");
      }
      this.shardCount = shardCount;
      this.liveInOrder = List.copyOf(liveMembers);
      this.live = new TreeSet<>(liveInOrder);
      this.owners = new TreeMap<>();
      owners.forEach((shard, holder) -> {
        Objects.checkIndex(shard, shardCount);
        this.owners.put(shard, Objects.requireNonNull(holder, "holder"));
      });
      this.flaw = flaw;
    }

    List<Integer> heldBy(String member) {
      List<Integer> held = new ArrayList<>();
      owners.forEach((shard, holder) -> {
        if (holder.equals(member)) {
          held.add(shard);
        }
      });
      return held;
    }

    Map<String, Integer> held() {
      Map<String, Integer> held = new HashMap<>();
      for (String member : live) {
        held.put(member, 0);
      }
      owners.values().forEach(holder -> held.computeIfPresent(holder, (member, count) -> count + 1));
      return held;
    }

    Map<String, Integer> quotas() {
      int members = live.size();
      int floor = shardCount / members;
      int extra = shardCount % members;
      Map<String, Integer> held = held();
      List<String> ranked = new ArrayList<>(flaw == Flaw.TIES_BY_INPUT_ORDER ? distinct(liveInOrder) : live);
      Comparator<String> byHeld = Comparator.comparing(held::get, Comparator.reverseOrder());
      if (flaw == Flaw.CEIL_BY_IDENTITY_ONLY) {
        ranked.sort(Comparator.naturalOrder());
      } else if (flaw == Flaw.TIES_BY_INPUT_ORDER) {
        ranked.sort(byHeld);
      } else {
        ranked.sort(byHeld.thenComparing(Comparator.naturalOrder()));
      }
      Map<String, Integer> quotas = new HashMap<>();
      for (int i = 0; i < ranked.size(); i++) {
        quotas.put(ranked.get(i), floor + (i < extra ? 1 : 0));
      }
      return quotas;
    }

    private static List<String> distinct(List<String> members) {
      List<String> distinct = new ArrayList<>();
      for (String member : members) {
        if (!distinct.contains(member)) {
          distinct.add(member);
        }
      }
      return distinct;
    }

    boolean isFree(int shard) {
      String holder = owners.get(shard);
      return holder == null || (flaw == Flaw.TAKES_FROM_DEPARTED_HOLDER && !live.contains(holder));
    }

    /** The free shards the shared assignment gives {@code self}: what it lacks, each to its highest weight. */
    List<Integer> takesOf(String self, Map<String, Integer> quotas) {
      Map<String, Integer> held = held();
      Map<String, Integer> lacking = new TreeMap<>();
      for (String member : live) {
        int slack = flaw == Flaw.TAKES_ONE_PAST_QUOTA ? 1 : 0;
        lacking.put(member, Math.max(0, quotas.get(member) - held.get(member) + slack));
      }
      List<Integer> free = new ArrayList<>();
      for (int shard = 0; shard < shardCount; shard++) {
        if (isFree(shard)) {
          free.add(shard);
        }
      }
      if (flaw == Flaw.TAKES_FROM_LIVE_MEMBER && lacking.get(self) > 0) {
        owners.forEach((shard, holder) -> {
          if (live.contains(holder) && held.get(holder) > quotas.get(holder) && !free.contains(shard)) {
            free.add(shard);
          }
        });
      }
      if (flaw == Flaw.NO_SHARED_ASSIGNMENT) {
        return free.subList(0, Math.min(lacking.get(self), free.size()));
      }
      List<Integer> takes = new ArrayList<>();
      for (int shard : free) {
        String chosen = null;
        for (Map.Entry<String, Integer> candidate : lacking.entrySet()) {
          if (candidate.getValue() > 0
              && (chosen == null || weight(candidate.getKey(), shard) > weight(chosen, shard))) {
            chosen = candidate.getKey();
          }
        }
        if (chosen == null) {
          continue;
        }
        lacking.merge(chosen, -1, Integer::sum);
        if (chosen.equals(self)) {
          takes.add(shard);
        }
      }
      return sorted(takes);
    }
  }
}
