package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The properties (a) to (e) of {@link ShardPlanner} as checks over one scenario, each returning the first violation
 * it finds, so that {@link ShardPlannerProperties} runs them on the real planner with jqwik and
 * {@link ShardPlannerBrokenVariantsTest} shows each of them failing on a planner with a deliberate defect.
 *
 * <p>The cluster model: in a round every acting member plans from the same view; then hand-overs free their shards
 * and takes set their holder, a take counted only when the shard was free in the view and no member before it (in
 * identity order, as the Lease's first writer wins) took it in the same round. A shard handed over is free from
 * the next round's view on.
 */
final class ShardPlannerChecks {

  /** Rounds within which ownership is fair from any view whose departed holders' shards are free: see ShardPlanner. */
  static final int CONVERGENCE_ROUNDS = 2;

  private ShardPlannerChecks() {}

  /** One round: the plans, and who took and handed over what. */
  record Round(ShardView after, Map<String, ShardPlanner.Plan> plans, Map<Integer, String> takes,
      Map<Integer, String> handOvers, int lostRaces) {}

  static Round round(ShardPlanner planner, ShardView view, Collection<String> acting) {
    Map<String, ShardPlanner.Plan> plans = new TreeMap<>();
    for (String member : new TreeSet<>(acting)) {
      plans.put(member, planner.plan(view.shardCount(), view.live(), member, view.owners()));
    }
    Map<Integer, String> owners = new TreeMap<>(view.owners());
    Map<Integer, String> takes = new TreeMap<>();
    Map<Integer, String> handOvers = new TreeMap<>();
    int lostRaces = 0;
    for (Map.Entry<String, ShardPlanner.Plan> entry : plans.entrySet()) {
      for (int shard : entry.getValue().handOver()) {
        if (entry.getKey().equals(owners.get(shard))) {
          owners.remove(shard);
          handOvers.put(shard, entry.getKey());
        }
      }
    }
    for (Map.Entry<String, ShardPlanner.Plan> entry : plans.entrySet()) {
      for (int shard : entry.getValue().take()) {
        if (view.isFree(shard) && !takes.containsKey(shard)) {
          owners.put(shard, entry.getKey());
          takes.put(shard, entry.getKey());
        } else {
          lostRaces++;
        }
      }
    }
    return new Round(view.withOwners(owners), plans, takes, handOvers, lostRaces);
  }

  private static Set<String> liveAnd(ShardView view, String... others) {
    Set<String> members = new TreeSet<>(view.live());
    members.addAll(List.of(others));
    return members;
  }

  /**
   * Every member's plan: keeps and hands over exactly what it holds, takes only free shards (never a live member's,
   * never a departed holder's), ends with at most ceil(S/M); a member outside the live set keeps and takes nothing.
   */
  static Optional<String> plansStayWithinFairShare(ShardPlanner planner, ShardView view) {
    Set<String> members = new TreeSet<>(view.live());
    members.addAll(view.owners().values());
    members.add("outsider");
    int live = new TreeSet<>(view.live()).size();
    int ceil = live == 0 ? 0 : (view.shardCount() + live - 1) / live;
    for (String member : members) {
      ShardPlanner.Plan plan = planner.plan(view.shardCount(), view.live(), member, view.owners());
      Set<Integer> held = new TreeSet<>(plan.keep());
      held.addAll(plan.handOver());
      if (!held.equals(new TreeSet<>(view.heldBy(member)))
          || plan.keep().size() + plan.handOver().size() != view.heldBy(member).size()) {
        return Optional.of(view + ": " + member + " keeps " + plan.keep() + " and hands over " + plan.handOver()
            + " but holds " + view.heldBy(member));
      }
      for (int shard : plan.take()) {
        if (!view.isFree(shard)) {
          return Optional.of(view + ": " + member + " takes shard " + shard + ", held by "
              + view.owners().get(shard));
        }
      }
      if (plan.heldAfter() > ceil) {
        return Optional.of(view + ": " + member + " would hold " + plan.heldAfter() + " > ceil(S/M) = " + ceil);
      }
      if (!view.live().contains(member) && plan.heldAfter() > 0) {
        return Optional.of(view + ": " + member + " is not a live member but plans to hold " + plan.heldAfter());
      }
    }
    return Optional.empty();
  }

  /** (c) Two members planning from the same view never plan to take the same shard. */
  static Optional<String> takesAreDisjoint(ShardPlanner planner, ShardView view) {
    Map<Integer, String> takers = new HashMap<>();
    for (String member : new TreeSet<>(view.live())) {
      for (int shard : planner.plan(view.shardCount(), view.live(), member, view.owners()).take()) {
        String other = takers.putIfAbsent(shard, member);
        if (other != null) {
          return Optional.of(view + ": " + other + " and " + member + " both plan to take shard " + shard);
        }
      }
    }
    return Optional.empty();
  }

  /** (e) The same view, its collections in another order (and a member listed twice), gives the same plans. */
  static Optional<String> isDeterministic(ShardPlanner planner, ShardView view, long seed) {
    Random random = new Random(seed);
    List<String> members = new ArrayList<>(view.live());
    if (!members.isEmpty() && random.nextBoolean()) {
      members.add(members.get(random.nextInt(members.size())));
    }
    Collections.shuffle(members, random);
    List<Map.Entry<Integer, String>> entries = new ArrayList<>(view.owners().entrySet());
    Collections.shuffle(entries, random);
    Map<Integer, String> owners = new LinkedHashMap<>();
    entries.forEach(entry -> owners.put(entry.getKey(), entry.getValue()));
    for (String member : liveAnd(view, "outsider")) {
      ShardPlanner.Plan plan = planner.plan(view.shardCount(), view.live(), member, view.owners());
      ShardPlanner.Plan again = planner.plan(view.shardCount(), view.live(), member, view.owners());
      ShardPlanner.Plan reordered = planner.plan(view.shardCount(), members, member, owners);
      if (!plan.equals(again) || !plan.equals(reordered)) {
        return Optional.of(view + ": " + member + " plans " + plan + ", then " + again + ", and from members "
            + members + " " + reordered);
      }
    }
    return Optional.empty();
  }

  /**
   * (a) From any view, with every live member acting and the departed holders' shards freed (their Leases expired)
   * after round {@code expiry} (0: before the first), ownership is fair after max(2, expiry + 1) rounds and stays
   * as it is.
   */
  static Optional<String> convergesWithinBound(ShardPlanner planner, ShardView start, int expiry) {
    int bound = Math.max(CONVERGENCE_ROUNDS, expiry + 1);
    ShardView view = expiry == 0 ? withoutDeparted(start) : start;
    for (int round = 1; round <= bound; round++) {
      Round next = round(planner, view, view.live());
      if (next.lostRaces() > 0) {
        return Optional.of(start + ": in round " + round + " from " + view + " " + next.lostRaces()
            + " take(s) lost a race");
      }
      view = round == expiry ? withoutDeparted(next.after()) : next.after();
    }
    if (!view.isFair()) {
      return Optional.of(start + " (departed holders' Leases expired after round " + expiry + "): not fair after "
          + bound + " rounds: " + view);
    }
    Round settled = round(planner, view, view.live());
    if (!settled.after().equals(view)) {
      return Optional.of(start + ": fair at " + view + " but the next round moves to " + settled.after());
    }
    return Optional.empty();
  }

  private static ShardView withoutDeparted(ShardView view) {
    Map<Integer, String> owners = new TreeMap<>(view.owners());
    owners.values().removeIf(holder -> !view.live().contains(holder));
    return view.withOwners(owners);
  }

  /**
   * (b) A newcomer joins a fair view: fair again within 2 rounds, every take is the newcomer's, every hand-over an
   * old member's, as many hand-overs as the newcomer ends with, and every shard ends with its old holder or the
   * newcomer.
   */
  static Optional<String> joinMovesOnlyWhatTheNewcomerNeeds(ShardPlanner planner, ShardView fair, String newcomer) {
    ShardView view = fair.withLive(liveAnd(fair, newcomer));
    int handOvers = 0;
    for (int round = 1; round <= CONVERGENCE_ROUNDS; round++) {
      Round next = round(planner, view, view.live());
      for (Map.Entry<Integer, String> take : next.takes().entrySet()) {
        if (!take.getValue().equals(newcomer)) {
          return Optional.of(fair + " + " + newcomer + ": in round " + round + " old member " + take.getValue()
              + " takes shard " + take.getKey());
        }
      }
      if (next.handOvers().containsValue(newcomer)) {
        return Optional.of(fair + " + " + newcomer + ": the newcomer hands over in round " + round);
      }
      handOvers += next.handOvers().size();
      view = next.after();
    }
    if (!view.isFair()) {
      return Optional.of(fair + " + " + newcomer + ": not fair after " + CONVERGENCE_ROUNDS + " rounds: " + view);
    }
    if (handOvers != view.heldBy(newcomer).size()) {
      return Optional.of(fair + " + " + newcomer + ": " + handOvers + " hand-overs for the newcomer's "
          + view.heldBy(newcomer).size() + " shards: " + view);
    }
    return Optional.empty();
  }

  /**
   * (b) A member leaves a fair view. Gracefully (it still acts: it hands everything over): fair within 2 rounds.
   * Crashed (it acts no more): nobody takes its shards while its Leases last ({@code expiry} rounds), fair 1 round
   * after they expire. Either way only the leaver's shards move, and no one else hands over anything.
   */
  static Optional<String> leaveMovesOnlyTheLeaversShards(ShardPlanner planner, ShardView fair, String leaver,
      boolean graceful, int expiry) {
    if (!fair.live().contains(leaver) || fair.live().size() < 2) {
      return Optional.empty();
    }
    Set<String> remaining = new TreeSet<>(fair.live());
    remaining.remove(leaver);
    Set<Integer> leaversShards = new HashSet<>(fair.heldBy(leaver));
    ShardView view = fair.withLive(remaining);
    Set<String> acting = graceful ? liveAnd(view, leaver) : remaining;
    int rounds = graceful ? CONVERGENCE_ROUNDS : expiry + 1;
    for (int round = 1; round <= rounds; round++) {
      Round next = round(planner, view, acting);
      for (Map.Entry<Integer, String> handOver : next.handOvers().entrySet()) {
        if (!handOver.getValue().equals(leaver)) {
          return Optional.of(fair + " - " + leaver + ": " + handOver.getValue() + " hands over shard "
              + handOver.getKey() + " in round " + round);
        }
      }
      for (int shard : next.takes().keySet()) {
        if (!leaversShards.contains(shard)) {
          return Optional.of(fair + " - " + leaver + ": shard " + shard + ", not the leaver's, is taken in round "
              + round);
        }
        if (!graceful && round <= expiry) {
          return Optional.of(fair + " - " + leaver + ": shard " + shard + " is taken in round " + round
              + " while the crashed leaver's Lease lasts until round " + expiry);
        }
      }
      view = !graceful && round == expiry ? withoutDeparted(next.after()) : next.after();
    }
    if (!view.isFair()) {
      return Optional.of(fair + " - " + leaver + (graceful ? " (graceful)" : " (crashed)") + ": not fair after "
          + rounds + " rounds: " + view);
    }
    return Optional.empty();
  }
}
