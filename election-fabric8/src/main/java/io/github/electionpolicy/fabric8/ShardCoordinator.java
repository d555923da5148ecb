package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ShardCoordinatorCommand.*;
import io.github.electionpolicy.fabric8.ShardCoordinatorInput.*;
import io.github.electionpolicy.fabric8.ShardCoordinatorPhase.*;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One replica's share of a sharded controller as a pure state machine, in the shape of {@link RunnerLifecycle}: one
 * {@link ShardCoordinatorPhase}, {@link ShardCoordinatorInput}s as values, {@link ShardCoordinatorCommand}s as
 * values. It decides, from the view of the controller's Leases, which per-shard runners exist: each of those runs
 * the per-runner machinery ({@link LeaseProtocol} and {@link RunnerLifecycle}) for one shard's Lease, so fencing,
 * loss policies and stop-before-release stay per shard and unchanged. It has no thread, lock, clock or logger; times
 * are the callers' monotonic nanoseconds, carried by the inputs.
 *
 * <p>The rules:
 * <ul>
 *   <li>It contends only for shards that {@link ShardPlanner} gives it, from the view, and only while it holds its
 *       membership Lease; it counts itself live then, whatever its view shows of its own Lease, and not live
 *       otherwise. It takes free shards at once.</li>
 *   <li>It hands over a surplus shard (one the plan says to hand over) only once the live set has been unchanged for
 *       {@code settleNanos}, so a rolling update does not reshuffle shards on every pod, with no member in it the view
 *       never saw renew (a Lease first listed may be a member's long gone): it keeps what it is handed meanwhile.</li>
 *   <li>A runner that contends for a shard the plan no longer gives it (the view shows another live member holding
 *       it: the race was lost; or the plan moved the free shard to another member) is closed at once. A runner that
 *       owns its shard is never closed because of a view that shows someone else: the Lease decides, and its own
 *       runner reports a loss.</li>
 *   <li>At most one runner per shard: a shard being handed over is not contended again until its runner reported
 *       stopped.</li>
 *   <li>Leaving (closed, or a shard abandoned), a member first marks its membership Lease as leaving, so that every
 *       view counts it out at once, then closes its shard runners; it releases the membership Lease only after
 *       every shard runner stopped. The first view that shows its own mark names the successors of its shards
 *       ({@link ShardCoordinatorCommand.Name}); with every runner stopped it stays, declining what it is handed, while
 *       a leaver that view showed (its mark stored first) holds a shard ({@link #lingers}).</li>
 *   <li>Losing the membership Lease (it could not be renewed) closes every shard runner; it joins again once they
 *       all stopped.</li>
 *   <li>A shard runner that stopped without releasing its Lease (its work may still run) ends contention for good:
 *       it closes the other shard runners and leaves ({@link StopCause#SHARD_ABANDONED}).</li>
 * </ul>
 *
 * <p>Not thread-safe: one caller at a time (the replica's loop).
 */
final class ShardCoordinator {

  /**
   * Deliberate defects, for tests only: the properties over a cluster of coordinators must catch every one of them.
   * Production code uses {@link #NONE}.
   */
  enum Flaw {
    /** The real coordinator. */
    NONE,
    /** A surplus shard is handed over at once, without waiting for membership to settle. */
    HANDS_OVER_BEFORE_SETTLE,
    /** A shard being handed over may be contended again before its runner reported stopped. */
    CONTENDS_BEFORE_STOPPED,
    /** Leaving releases the membership Lease at once, while shard runners still stop. */
    LEAVES_BEFORE_SHARDS_STOPPED,
    /** A member whose membership Lease was lost carries on as a member. */
    IGNORES_MEMBERSHIP_LOSS,
    /** A shard being handed over keeps its token until its runner stopped: new work for it may start meanwhile. */
    TOKEN_KEPT_WHILE_HANDING_OVER,
    /** A leaver releases its membership Lease once its runners stopped, without waiting for the other leavers. */
    LEAVES_WITHOUT_LINGERING
  }

  /** What one shard runner is doing, as far as the coordinator knows. */
  enum RunnerState {
    /** Started; contends for the shard's Lease. */
    CONTENDING,
    /** Holds the shard's Lease; its work runs. */
    OWNING,
    /** Being closed: told to hand over, not yet reported stopped. */
    CLOSING
  }

  private final String identity;
  private final int shardCount;
  private final long settleNanos;
  private final long lingerNanos;
  private final ShardPlanner planner;
  private final Flaw flaw;
  private ShardCoordinatorPhase phase = new Created();
  private final TreeMap<Integer, RunnerState> runners = new TreeMap<>();
  private final TreeMap<Integer, Long> tokens = new TreeMap<>();
  // Shards a runner was started for only to decline them, while the view shows them held by this replica still.
  private final TreeSet<Integer> declined = new TreeSet<>();
  private ViewObserved view;
  private Set<String> lastLive = Set.of();
  private long liveChangedAt;
  private long now;
  // The membership elector runs: contending, holding or releasing the membership Lease.
  private boolean membershipRunning;
  // Leaving since leftAt after it marked its membership Lease: its hand-overs name successors from the first view that
  // shows the mark (markSeen); it lingers (lingers()) for the members that view showed leaving (earlierLeavers).
  private boolean announced;
  private boolean markSeen;
  private long leftAt;
  private final TreeSet<Integer> leaveHandOvers = new TreeSet<>();
  private final TreeSet<String> earlierLeavers = new TreeSet<>();
  private List<ShardCoordinatorCommand> out;

  ShardCoordinator(String identity, int shardCount, long settleNanos) {
    this(identity, shardCount, settleNanos, ShardPlanner.FAIR, Flaw.NONE);
  }

  /** A coordinator whose leave does not linger ({@code lingerNanos} 0). */
  ShardCoordinator(String identity, int shardCount, long settleNanos, ShardPlanner planner, Flaw flaw) {
    this(identity, shardCount, settleNanos, 0, planner, flaw);
  }

  /** @param lingerNanos how long at most a leaver stays for an earlier leaver ({@link #lingers}); 0: it does not */
  ShardCoordinator(String identity, int shardCount, long settleNanos, long lingerNanos, ShardPlanner planner,
      Flaw flaw) {
    this.identity = Objects.requireNonNull(identity, "identity");
    if (shardCount < 1) {
      throw new IllegalArgumentException("shardCount=" + shardCount + " is not valid: accepted values are 1 or more");
    }
    if (settleNanos < 0) {
      throw new IllegalArgumentException("settleNanos=" + settleNanos + " is not valid: accepted values are 0 or more");
    }
    if (lingerNanos < 0) {
      throw new IllegalArgumentException("lingerNanos=" + lingerNanos + " is not valid: accepted values are 0 or more");
    }
    this.shardCount = shardCount;
    this.settleNanos = settleNanos;
    this.lingerNanos = lingerNanos;
    this.planner = Objects.requireNonNull(planner, "planner");
    this.flaw = Objects.requireNonNull(flaw, "flaw");
  }

  ShardCoordinatorPhase phase() {
    return phase;
  }

  /** The shard runners that exist, by shard. */
  SortedMap<Integer, RunnerState> runners() {
    return Collections.unmodifiableSortedMap(new TreeMap<>(runners));
  }

  /**
   * The fencing token of each shard this replica owns and keeps, as its runner reported it: a runner that contends
   * again (its term lost) or is being handed over has none, so new work for its shard starts nowhere here.
   */
  SortedMap<Integer, Long> tokens() {
    return Collections.unmodifiableSortedMap(new TreeMap<>(tokens));
  }

  /** Takes in one input; returns the commands it leads to, in order. */
  List<ShardCoordinatorCommand> step(ShardCoordinatorInput input) {
    Objects.requireNonNull(input, "input");
    out = new ArrayList<>();
    now = input.now();
    if (input instanceof Start) {
      start();
    } else if (input instanceof ViewObserved observed) {
      view = observed;
      noteLiveSet();
      plan();
      if (phase instanceof Leaving || phase instanceof Releasing || phase instanceof Lapsed) {
        declineUnwanted(Set.of());
      }
      if (phase instanceof Leaving) {
        nameSuccessorsOnceMarked();
        finishLeavingIfDone();
      }
    } else if (input instanceof MembershipHeld) {
      membershipHeld();
    } else if (input instanceof MembershipLost) {
      membershipLost();
    } else if (input instanceof MembershipReleased) {
      membershipReleased();
    } else if (input instanceof ShardContending contending) {
      runners.computeIfPresent(contending.shard(), (shard, state) -> state == RunnerState.OWNING
          ? RunnerState.CONTENDING : state);
      tokens.remove(contending.shard());
    } else if (input instanceof ShardOwned owned) {
      if (runners.get(owned.shard()) == RunnerState.CONTENDING) {
        runners.put(owned.shard(), RunnerState.OWNING);
        tokens.put(owned.shard(), owned.token());
      }
    } else if (input instanceof ShardStopped stopped) {
      shardStopped(stopped);
    } else if (input instanceof CloseRequested) {
      close();
    } else if (input instanceof Tick) {
      plan();
      finishLeavingIfDone(); // a linger's bound may have run out
    }
    List<ShardCoordinatorCommand> commands = List.copyOf(out);
    out = null;
    return commands;
  }

  private void start() {
    if (!(phase instanceof Created)) {
      throw new IllegalStateException("start while " + phase);
    }
    join();
  }

  private void join() {
    phase = new Joining();
    membershipRunning = true;
    out.add(new Join());
  }

  private void membershipHeld() {
    if (phase instanceof Joining) {
      phase = new Member();
      noteLiveSet();
      plan();
    }
    // Held while leaving: the Leave that follows the shard runners' stops releases it.
  }

  private void membershipLost() {
    if (phase instanceof Member && flaw == Flaw.IGNORES_MEMBERSHIP_LOSS) {
      return;
    }
    membershipRunning = false;
    if (phase instanceof Joining) {
      join(); // it could not take the Lease: it tries again (the membership elector paces its attempts)
    } else if (phase instanceof Member) {
      phase = new Lapsed();
      noteLiveSet();
      closeEvery(Why.MEMBERSHIP_LOST);
      rejoinOrStop();
    } else if (phase instanceof Leaving) {
      finishLeavingIfDone();
    } else if (phase instanceof Releasing releasing) {
      stopped(releasing.cause());
    }
  }

  private void membershipReleased() {
    membershipRunning = false;
    if (phase instanceof Releasing releasing) {
      stopped(releasing.cause());
    }
  }

  private void shardStopped(ShardStopped stopped) {
    if (runners.remove(stopped.shard()) == null) {
      return; // no such runner: a stale report
    }
    tokens.remove(stopped.shard());
    if (!stopped.released() && (phase instanceof Member || phase instanceof Lapsed || phase instanceof Leaving leaving
        && leaving.cause() == StopCause.CLOSED)) {
      // Its work may still run: no shard of this replica's is safe to take again.
      beginLeaving(StopCause.SHARD_ABANDONED, Why.LEAVING);
      return;
    }
    if (phase instanceof Member) {
      plan();
    } else if (phase instanceof Lapsed) {
      rejoinOrStop();
    } else if (phase instanceof Leaving) {
      finishLeavingIfDone();
    }
  }

  private void close() {
    if (phase instanceof Created) {
      stopped(StopCause.CLOSED);
    } else if (phase instanceof Joining) {
      phase = new Leaving(StopCause.CLOSED);
      finishLeavingIfDone();
    } else if (phase instanceof Member || phase instanceof Lapsed) {
      beginLeaving(StopCause.CLOSED, Why.LEAVING);
    }
  }

  private void beginLeaving(StopCause cause, Why why) {
    if (phase instanceof Member) {
      // Still holding its membership Lease, it says it leaves, so that the others count it out now, not once its
      // slowest shard stopped: each shard it releases then goes at once to a member that stays.
      out.add(new AnnounceLeaving());
      announced = true;
      leftAt = now;
    }
    phase = new Leaving(cause);
    List<Integer> closed = closeEvery(why);
    if (announced) {
      leaveHandOvers.addAll(closed);
    }
    if (flaw == Flaw.LEAVES_BEFORE_SHARDS_STOPPED && membershipRunning) {
      phase = new Releasing(cause);
      out.add(new Leave());
      return;
    }
    finishLeavingIfDone();
  }

  private void finishLeavingIfDone() {
    if (!(phase instanceof Leaving leaving) || !runners.isEmpty() || lingers()) {
      return;
    }
    if (membershipRunning) {
      phase = new Releasing(leaving.cause());
      out.add(new Leave());
    } else {
      stopped(leaving.cause());
    }
  }

  /**
   * The first view that shows this leaver's own mark names the successors of the shards it closed on leaving (held by
   * the driver until now): every mark the server stored before this one's is in it, so no such member is named.
   */
  private void nameSuccessorsOnceMarked() {
    if (!announced || markSeen || !membershipRunning || view == null || !view.leavingMembers().contains(identity)) {
      return;
    }
    markSeen = true;
    earlierLeavers.addAll(view.leavingMembers());
    earlierLeavers.remove(identity);
    leaveHandOvers.retainAll(runners.keySet());
    successors(new ArrayList<>(leaveHandOvers), lastLive).forEach((shard, next) -> out.add(new Name(shard, next)));
    leaveHandOvers.clear();
    out.add(new MarkSeen());
  }

  /**
   * Whether a leaver whose runners all stopped stays (its marked membership Lease held, declining what it is handed):
   * while a leaver its first view with its own mark showed (its mark stored first) holds a shard, at most
   * {@code lingerNanos} from its leave; while its view does not show its own mark, at most {@code settleNanos}; with
   * no view (it could decline nothing), not at all. That leaver may have named this one from a view without this
   * one's mark; a hand-over to a replica gone is neither taken in nor declined. A leaver whose mark came later never
   * names this one (review h-leave). A view showing the earlier one holding nothing shows every hand-over it wrote.
   */
  private boolean lingers() {
    if (!announced || !membershipRunning || view == null || now - leftAt >= lingerNanos
        || flaw == Flaw.LEAVES_WITHOUT_LINGERING) {
      return false;
    }
    if (!markSeen) {
      return now - leftAt < settleNanos;
    }
    return view.holders().values().stream()
        .anyMatch(holder -> earlierLeavers.contains(holder) && view.leavingMembers().contains(holder));
  }

  private void rejoinOrStop() {
    if (runners.isEmpty()) {
      join();
    }
  }

  private void stopped(StopCause cause) {
    phase = new Stopped(cause);
    out.add(new ReportStopped(cause));
  }

  /** Closes every runner not closing yet; returns their shards. */
  private List<Integer> closeEvery(Why why) {
    List<Integer> closing = new ArrayList<>();
    for (Map.Entry<Integer, RunnerState> runner : runners.entrySet()) {
      if (runner.getValue() != RunnerState.CLOSING) {
        closing.add(runner.getKey());
      }
    }
    // A leaver names its successors once its view shows its mark (nameSuccessorsOnceMarked); until then none.
    for (int shard : closing) {
      handOver(shard, why, null);
    }
    return closing;
  }

  private void handOver(int shard, Why why, Successor successor) {
    runners.put(shard, RunnerState.CLOSING);
    // From the hand-over on the shard is not this replica's to start work for, though its runner's term may last
    // until its work stopped.
    if (flaw != Flaw.TOKEN_KEPT_WHILE_HANDING_OVER) {
      tokens.remove(shard);
    }
    out.add(new HandOver(shard, why, java.util.Optional.ofNullable(successor)));
  }

  /**
   * Who gets each of {@code shards} once this replica lets them go, by the plan every other member of {@code live}
   * makes from the view with those shards free (this replica's share counted as {@code live} has it: kept while it
   * stays a member, none once it leaves): the member whose plan takes it, with its membership Lease's resourceVersion
   * as the view saw it. A shard no member's plan takes, or whose taker the view lacks a version of or never saw renew,
   * is released. The Leases still decide: a successor that cannot take the hand-over in waits it out, as for a crash.
   */
  private Map<Integer, Successor> successors(List<Integer> shards, Set<String> live) {
    if (view == null || shards.isEmpty() || view.memberVersions().isEmpty()) {
      return Map.of();
    }
    Map<Integer, String> owners = new TreeMap<>(view.holders());
    shards.forEach(owners::remove);
    Map<Integer, Successor> successors = new TreeMap<>();
    for (String member : live) {
      String version = view.memberVersions().get(member);
      if (member.equals(identity) || version == null || view.unconfirmedMembers().contains(member)) {
        continue;
      }
      for (int shard : planner.plan(shardCount, live, member, owners).take()) {
        if (shards.contains(shard)) {
          successors.put(shard, new Successor(member, version));
        }
      }
    }
    return successors;
  }

  /** The live set it plans with: the view's, itself in it exactly while it holds its membership Lease. */
  private Set<String> liveSet() {
    TreeSet<String> live = new TreeSet<>(view == null ? Set.of() : view.liveMembers());
    if (phase instanceof Member) {
      live.add(identity);
    } else {
      live.remove(identity);
    }
    return live;
  }

  private void noteLiveSet() {
    Set<String> live = liveSet();
    if (!live.equals(lastLive)) {
      lastLive = live;
      liveChangedAt = now;
    }
  }

  private void plan() {
    if (!(phase instanceof Member) || view == null) {
      return;
    }
    ShardPlanner.Plan plan = planner.plan(shardCount, lastLive, identity, view.holders());
    boolean unconfirmed = view.unconfirmedAmong(lastLive, identity); // one never seen renewing may be long gone
    boolean settled = now - liveChangedAt >= settleNanos && !unconfirmed || flaw == Flaw.HANDS_OVER_BEFORE_SETTLE;
    List<Integer> wanted = new ArrayList<>(plan.take());
    // A shard the view shows it holding, with no runner (its runner ended on its own, or this process restarted
    // under the same identity before its Leases expired): its runner starts again; one handed to it, while unconfirmed.
    wanted.addAll(plan.keep());
    plan.handOver().stream().filter(shard -> unconfirmed && view.handOvers().contains(shard)).forEach(wanted::add);
    for (int shard : wanted) {
      RunnerState state = runners.get(shard);
      if (state == null || state == RunnerState.CLOSING && flaw == Flaw.CONTENDS_BEFORE_STOPPED) {
        runners.put(shard, RunnerState.CONTENDING);
        out.add(new Contend(shard));
      }
    }
    declineUnwanted(Set.copyOf(wanted));
    List<Integer> surplus = new ArrayList<>();
    for (Map.Entry<Integer, RunnerState> runner : new ArrayList<>(runners.entrySet())) {
      int shard = runner.getKey();
      if (runner.getValue() == RunnerState.CLOSING || plan.keep().contains(shard) || plan.take().contains(shard)) {
        continue;
      }
      if (plan.handOver().contains(shard)) {
        if (settled) {
          surplus.add(shard);
        }
      } else if (runner.getValue() == RunnerState.CONTENDING) {
        String holder = view.holders().get(shard);
        handOver(shard, holder != null && lastLive.contains(holder) ? Why.LOST_RACE : Why.NOT_PLANNED, null);
      }
    }
    Map<Integer, Successor> successors = successors(surplus, lastLive);
    for (int shard : surplus) {
      handOver(shard, Why.SURPLUS, successors.get(shard));
    }
  }

  /**
   * A shard the view shows handed over to this replica, with no runner here and not {@code wanted}: a hand-over named
   * this replica from a view that did not show it leaving, lapsed or at its share. A runner is started to decline it, once
   * while the view shows it held here; it counts as a runner until it stopped (a leaver releases its membership Lease
   * after it).
   */
  private void declineUnwanted(Set<Integer> wanted) {
    if (view == null) {
      return;
    }
    declined.removeIf(shard -> !identity.equals(view.holders().get(shard)));
    for (Map.Entry<Integer, String> held : view.holders().entrySet()) {
      int shard = held.getKey();
      if (identity.equals(held.getValue()) && view.handOvers().contains(shard) && !runners.containsKey(shard)
          && !wanted.contains(shard) && declined.add(shard)) {
        runners.put(shard, RunnerState.CLOSING);
        out.add(new Decline(shard));
      }
    }
  }

  @Override
  public String toString() {
    return "ShardCoordinator{" + identity + ", " + phase + ", runners " + runners + "}";
  }
}
