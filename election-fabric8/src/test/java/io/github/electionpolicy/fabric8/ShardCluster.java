package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ShardCoordinatorCommand.Contend;
import io.github.electionpolicy.fabric8.ShardCoordinatorCommand.HandOver;
import io.github.electionpolicy.fabric8.ShardCoordinatorCommand.Join;
import io.github.electionpolicy.fabric8.ShardCoordinatorCommand.Leave;
import io.github.electionpolicy.fabric8.ShardCoordinatorCommand.ReportStopped;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Several {@link ShardCoordinator}s fed one shared view, in steps of one retry period, by a small Lease arbiter:
 * membership and shard Leases with a holder and the step of their last renewal, expired {@link #LEASE_STEPS} after
 * it; a contender takes a Lease that is free, expired or its own identity's (as {@link LeaseProtocol} retakes what
 * its own last term left), the first writer of a step winning. Shard runners are modelled: a contender takes the
 * Lease when it can; an owner's work runs and renews until it is handed over, then stops within
 * {@link #MAX_STOP_STEPS} and releases (or, one in {@link #HANG_ODDS}, its stop outlives its deadline: its term ends
 * and its Lease is left to expire); now and then an owner loses its term and contends again. Membership churns by a seeded schedule: joins (some restart a crashed
 * identity), graceful leaves, crashes (the process and its work vanish; its Leases expire) and lapses (a member's
 * membership Lease is not renewed in time). Every step the cluster records what the properties of
 * {@link ShardCoordinatorProperties} forbid.
 *
 * <p>Not thread-safe; deterministic from its seed.
 */
final class ShardCluster {

  static final long LEASE_STEPS = 5;
  static final long SETTLE_STEPS = 2;
  static final int MAX_STOP_STEPS = 3;
  /**
   * Once membership settled (the live set last changed, and the last churn event happened), every live member holds
   * its fair share, and every shard is held, this many steps later at the latest: the settle time, the slowest stop
   * of a surplus shard, the step in which the view shows it free and the step of its take, and one more for a
   * lapsed member's new join. Measured over 20,000 seeds: 8 steps at most.
   */
  static final long FAIR_BOUND_STEPS = SETTLE_STEPS + MAX_STOP_STEPS + 3;
  /** One in this many hand-overs of an owning runner has a stop that outlives its deadline. */
  static final int HANG_ODDS = 25;
  /** Each step, one in this many owning runners loses its term (a renewal failed past the renew deadline). */
  static final int TERM_LOSS_ODDS = 400;

  // A free shard may wait longer while a member that the shared assignment gives it to has departed (crashed,
  // lapsed or leaving without its membership Lease): until that member's membership Lease expired, one lease
  // duration per departed assignee in a row. Those gaps are measured (maxFreeSteps), not bounded by a property;
  // the fairness bound covers them once membership settles.

  /**
   * No shard stays free for longer while every live member of the view is a running member (none crashed, lapsed
   * or joining): the step the view shows it free, and the next, in which its assignee takes it.
   */
  static final long HEALTHY_FREE_BOUND_STEPS = 1;

  /** What a run found: each list one property's violations, in order. */
  record Report(List<String> overlaps, List<String> doubleRunners, List<String> earlyHandOvers,
      List<String> earlyLeaves, List<String> unfair, List<String> longFree, List<String> wrongTokens,
      long maxFreeSteps, long maxHealthyFreeSteps, long maxStepsToFair, long steps, int hungStops, int termLosses) {

    /** Whether no property was violated. */
    boolean clean() {
      return overlaps.isEmpty() && doubleRunners.isEmpty() && earlyHandOvers.isEmpty() && earlyLeaves.isEmpty()
          && unfair.isEmpty() && longFree.isEmpty() && wrongTokens.isEmpty();
    }
  }

  private static final class Lease {
    String holder;
    long renewedAt;
    boolean renewing = true;
    boolean leaving;
  }

  private enum RunnerState { CONTENDING, OWNING, STOPPING }

  private static final class Runner {
    final String member;
    final int shard;
    RunnerState state = RunnerState.CONTENDING;
    // The fencing token of its current term (the step it took the Lease), null while it holds none.
    Long token;
    long stopAt;
    // Its stop outlives its deadline: the runner ends its term and leaves the Lease to expire.
    boolean hangs;

    Runner(String member, int shard) {
      this.member = member;
      this.shard = shard;
    }
  }

  private final class Node {
    final String id;
    final ShardCoordinator coordinator;
    final Deque<ShardCoordinatorInput> inbox = new ArrayDeque<>();
    boolean wantsJoin;
    boolean wantsLeave;
    boolean closing;
    // When the live set last changed, as of the last view this node was given.
    long seenLiveChangedAt;

    Node(String id) {
      this.id = id;
      this.coordinator = new ShardCoordinator(id, shards, SETTLE_STEPS, ShardPlanner.FAIR, flaw);
    }
  }

  private final int shards;
  private final ShardCoordinator.Flaw flaw;
  private final Random random;
  private final List<ShardChurn.Event> schedule;
  private final Map<String, Node> nodes = new TreeMap<>();
  private final Map<String, Lease> memberships = new TreeMap<>();
  private final Map<Integer, Lease> shardLeases = new TreeMap<>();
  private final List<Runner> runners = new ArrayList<>();
  private final long[] freeFor;
  private final List<String> overlaps = new ArrayList<>();
  private final List<String> doubleRunners = new ArrayList<>();
  private final List<String> earlyHandOvers = new ArrayList<>();
  private final List<String> earlyLeaves = new ArrayList<>();
  private final List<String> wrongTokens = new ArrayList<>();
  private final List<String> unfair = new ArrayList<>();
  private final List<String> longFree = new ArrayList<>();
  private long maxFreeSteps;
  private long maxHealthyFreeSteps;
  private int hungStops;
  private int termLosses;
  private final long[] healthyFreeFor;
  private long maxStepsToFair;
  private Set<String> lastLive = Set.of();
  private long liveChangedAt;
  private boolean fairSinceChange;
  private long now;
  private StringBuilder trace;

  private ShardCluster(int shards, ShardCoordinator.Flaw flaw, long seed, List<ShardChurn.Event> schedule) {
    this.shards = shards;
    this.flaw = flaw;
    this.random = new Random(seed);
    this.schedule = schedule;
    this.freeFor = new long[shards];
    this.healthyFreeFor = new long[shards];
    for (int shard = 0; shard < shards; shard++) {
      shardLeases.put(shard, new Lease());
    }
  }

  /** One run from {@code seed}: its shard count, initial members and churn all come from the seed. */
  static Report run(long seed, ShardCoordinator.Flaw flaw) {
    Random random = new Random(seed);
    int[] counts = {1, 2, 3, 5, 8, 16};
    int shards = counts[random.nextInt(counts.length)];
    return new ShardCluster(shards, flaw, random.nextLong(), ShardChurn.schedule(random)).run();
  }

  /** One run from {@code seed}, step by step: the schedule, then each step's view and commands. */
  static String trace(long seed, ShardCoordinator.Flaw flaw) {
    Random random = new Random(seed);
    int[] counts = {1, 2, 3, 5, 8, 16};
    int shards = counts[random.nextInt(counts.length)];
    ShardCluster cluster = new ShardCluster(shards, flaw, random.nextLong(), ShardChurn.schedule(random));
    cluster.trace = new StringBuilder("S=" + shards + " " + cluster.schedule + "\n");
    Report report = cluster.run();
    return cluster.trace + report.toString();
  }

  /** Prints the trace of the first seed from 0 whose run violates a property; run by hand. */
  public static void main(String[] args) {
    ShardCoordinator.Flaw flaw = ShardCoordinator.Flaw.valueOf(args.length > 0 ? args[0] : "NONE");
    int seeds = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
    for (long seed = 0; seed < seeds; seed++) {
      Report report = run(seed, flaw);
      if (!report.clean()) {
        System.out.println("seed " + seed + "\n" + trace(seed, flaw));
        return;
      }
    }
    long maxFree = 0;
    long maxHealthyFree = 0;
    long maxToFair = 0;
    long steps = 0;
    long hung = 0;
    long losses = 0;
    for (long seed = 0; seed < 20_000; seed++) {
      Report report = run(seed, flaw);
      steps += report.steps();
      hung += report.hungStops();
      losses += report.termLosses();
      maxFree = Math.max(maxFree, report.maxFreeSteps());
      maxHealthyFree = Math.max(maxHealthyFree, report.maxHealthyFreeSteps());
      maxToFair = Math.max(maxToFair, report.maxStepsToFair());
    }
    System.out.println("no violation in " + seeds + " seeds; over 20000: max free " + maxFree + ", max free while healthy "
        + maxHealthyFree + ", max steps to fair " + maxToFair + ", steps " + steps + ", hung stops " + hung
        + ", term losses " + losses);
  }

  private Report run() {
    long lastEvent = schedule.stream().mapToLong(ShardChurn.Event::step).max().orElse(0);
    long end = lastEvent + LEASE_STEPS + FAIR_BOUND_STEPS + 10;
    for (now = 0; now <= end; now++) {
      step();
    }
    if (now - liveChangedAt < FAIR_BOUND_STEPS) {
      unfair.add("the live set still changed at step " + liveChangedAt + ", run ends at " + now);
    }
    return new Report(overlaps, doubleRunners, earlyHandOvers, earlyLeaves, unfair, longFree, wrongTokens,
        maxFreeSteps, maxHealthyFreeSteps, maxStepsToFair, now, hungStops, termLosses);
  }

  private void step() {
    for (ShardChurn.Event event : schedule) {
      if (event.step() == now) {
        apply(event);
      }
    }
    // Renewals: a live process renews its membership Lease and the Leases of the shards whose work runs.
    for (Node node : nodes.values()) {
      Lease membership = memberships.get(node.id);
      if (membership != null && node.id.equals(membership.holder) && membership.renewing) {
        membership.renewedAt = now;
      }
    }
    for (Runner runner : runners) {
      Lease lease = shardLeases.get(runner.shard);
      if (runner.state != RunnerState.CONTENDING && runner.member.equals(lease.holder)) {
        lease.renewedAt = now;
      }
    }
    for (Runner runner : new ArrayList<>(runners)) {
      if (runner.state == RunnerState.STOPPING && runner.stopAt <= now) {
        Lease lease = shardLeases.get(runner.shard);
        if (!runner.hangs && runner.member.equals(lease.holder) && runnersOf(runner.member, runner.shard).size() == 1) {
          lease.holder = null;
        }
        runners.remove(runner);
        hungStops += runner.hangs ? 1 : 0;
        tell(runner.member, new ShardCoordinatorInput.ShardStopped(runner.shard, !runner.hangs, now));
      } else if (runner.state == RunnerState.OWNING && random.nextInt(TERM_LOSS_ODDS) == 0) {
        // A renewal failed past the renew deadline: the term ends, the work stops, and the runner contends again
        // (it retakes the Lease its own last term left, a new term).
        runner.state = RunnerState.CONTENDING;
        runner.token = null;
        termLosses++;
        tell(runner.member, new ShardCoordinatorInput.ShardContending(runner.shard, now));
      }
    }
    List<Runner> contenders = new ArrayList<>();
    for (Runner runner : runners) {
      if (runner.state == RunnerState.CONTENDING) {
        contenders.add(runner);
      }
    }
    Collections.shuffle(contenders, random);
    for (Runner runner : contenders) {
      Lease lease = shardLeases.get(runner.shard);
      if (takes(lease, runner.member)) {
        lease.holder = runner.member;
        lease.renewedAt = now;
        runner.state = RunnerState.OWNING;
        runner.token = now;
        tell(runner.member, new ShardCoordinatorInput.ShardOwned(runner.shard, now, now));
      }
    }
    for (Node node : nodes.values()) {
      Lease membership = memberships.computeIfAbsent(node.id, id -> new Lease());
      if (node.wantsJoin && takes(membership, node.id)) {
        node.wantsJoin = false;
        membership.holder = node.id;
        membership.renewedAt = now;
        membership.renewing = true;
        membership.leaving = false;
        tell(node.id, new ShardCoordinatorInput.MembershipHeld(now));
      }
      if (node.wantsLeave) {
        node.wantsLeave = false;
        if (node.id.equals(membership.holder)) {
          membership.holder = null;
        }
        tell(node.id, new ShardCoordinatorInput.MembershipReleased(now));
      }
    }
    ShardCoordinatorInput.ViewObserved view = view();
    if (!view.liveMembers().equals(lastLive)) {
      lastLive = view.liveMembers();
      liveChangedAt = now;
      fairSinceChange = false;
    }
    for (Node node : new ArrayList<>(nodes.values())) {
      while (!node.inbox.isEmpty() && nodes.get(node.id) == node) {
        carryOut(node, node.coordinator.step(node.inbox.poll()));
      }
      if (nodes.get(node.id) == node) {
        checkTokens(node);
        node.seenLiveChangedAt = liveChangedAt;
        carryOut(node, node.coordinator.step(view));
        carryOut(node, node.coordinator.step(new ShardCoordinatorInput.Tick(now)));
      }
    }
    if (trace != null) {
      trace.append(now).append(": live ").append(view.liveMembers()).append(" holders ").append(view.holders())
          .append('\n');
    }
    check(view);
  }

  /**
   * Once it has heard everything its runners told it, a coordinator knows the token of exactly the terms its runners
   * hold and it keeps ("mine, under which term?"): none of a runner it is handing over.
   */
  private void checkTokens(Node node) {
    Map<Integer, Long> expected = new java.util.TreeMap<>();
    for (Runner runner : runners) {
      if (runner.member.equals(node.id) && runner.token != null
          && node.coordinator.runners().get(runner.shard) != ShardCoordinator.RunnerState.CLOSING) {
        expected.put(runner.shard, runner.token);
      }
    }
    if (!expected.equals(node.coordinator.tokens()) && wrongTokens.size() < 10) {
      wrongTokens.add("step " + now + ": " + node.id + " knows the tokens " + node.coordinator.tokens()
          + ", its runners hold " + expected);
    }
  }

  private boolean takes(Lease lease, String member) {
    return lease.holder == null || member.equals(lease.holder) || now - lease.renewedAt >= LEASE_STEPS;
  }

  private ShardCoordinatorInput.ViewObserved view() {
    Set<String> live = new TreeSet<>();
    memberships.forEach((id, lease) -> {
      if (lease.holder != null && now - lease.renewedAt < LEASE_STEPS && !lease.leaving) {
        live.add(lease.holder);
      }
    });
    Map<Integer, String> holders = new TreeMap<>();
    shardLeases.forEach((shard, lease) -> {
      if (lease.holder != null && now - lease.renewedAt < LEASE_STEPS) {
        holders.put(shard, lease.holder);
      }
    });
    return new ShardCoordinatorInput.ViewObserved(live, holders, now);
  }

  private void apply(ShardChurn.Event event) {
    Node node = nodes.get(event.member());
    switch (event.kind()) {
      case JOIN -> {
        Node joined = new Node(event.member());
        nodes.put(joined.id, joined);
        carryOut(joined, joined.coordinator.step(new ShardCoordinatorInput.Start(now)));
      }
      case LEAVE -> {
        if (node != null) {
          node.closing = true;
          tell(node.id, new ShardCoordinatorInput.CloseRequested(now));
        }
      }
      case CRASH -> {
        if (node != null) {
          nodes.remove(node.id);
          runners.removeIf(runner -> runner.member.equals(node.id));
        }
      }
      case LAPSE -> {
        Lease membership = memberships.get(event.member());
        if (node != null && membership != null && node.id.equals(membership.holder)) {
          membership.renewing = false;
          tell(node.id, new ShardCoordinatorInput.MembershipLost(now));
        }
      }
    }
  }

  private void tell(String member, ShardCoordinatorInput input) {
    Node node = nodes.get(member);
    if (node != null) {
      node.inbox.add(input);
    }
  }

  private List<Runner> runnersOf(String member, int shard) {
    List<Runner> found = new ArrayList<>();
    for (Runner runner : runners) {
      if (runner.member.equals(member) && runner.shard == shard) {
        found.add(runner);
      }
    }
    return found;
  }

  private void carryOut(Node node, List<ShardCoordinatorCommand> commands) {
    if (trace != null && !commands.isEmpty()) {
      trace.append(now).append(":   ").append(node.id).append(' ').append(commands).append(" -> ")
          .append(node.coordinator.phase()).append('\n');
    }
    for (ShardCoordinatorCommand command : commands) {
      if (command instanceof Join) {
        node.wantsJoin = true;
      } else if (command instanceof Contend contend) {
        if (!runnersOf(node.id, contend.shard()).isEmpty()) {
          doubleRunners.add("step " + now + ": " + node.id + " starts a second runner for shard " + contend.shard());
        }
        runners.add(new Runner(node.id, contend.shard()));
      } else if (command instanceof HandOver handOver) {
        handOver(node, handOver.shard());
      } else if (command instanceof ShardCoordinatorCommand.Decline decline) {
        // This model writes no hand-over by name: a runner started to decline one finds none and ends.
        tell(node.id, new ShardCoordinatorInput.ShardStopped(decline.shard(), true, now));
      } else if (command instanceof ShardCoordinatorCommand.AnnounceLeaving) {
        Lease membership = memberships.get(node.id);
        if (membership != null && node.id.equals(membership.holder)) {
          membership.leaving = true;
        }
      } else if (command instanceof Leave) {
        for (Runner runner : runners) {
          if (runner.member.equals(node.id)) {
            earlyLeaves.add("step " + now + ": " + node.id + " releases its membership while its runner for shard "
                + runner.shard + " is " + runner.state);
            break;
          }
        }
        node.wantsLeave = true;
      } else if (command instanceof ReportStopped) {
        nodes.remove(node.id);
      }
    }
  }

  private void handOver(Node node, int shard) {
    for (Runner runner : runnersOf(node.id, shard)) {
      if (runner.state == RunnerState.CONTENDING) {
        runners.remove(runner);
        tell(node.id, new ShardCoordinatorInput.ShardStopped(shard, true, now));
        return;
      }
      if (runner.state == RunnerState.OWNING) {
        if (node.coordinator.phase() instanceof ShardCoordinatorPhase.Member
            && now - node.seenLiveChangedAt < SETTLE_STEPS) {
          earlyHandOvers.add("step " + now + ": " + node.id + " hands over shard " + shard + ", the live set changed at "
              + node.seenLiveChangedAt + " in its view");
        }
        runner.state = RunnerState.STOPPING;
        runner.stopAt = now + 1 + random.nextInt(MAX_STOP_STEPS);
        runner.hangs = random.nextInt(HANG_ODDS) == 0;
        return;
      }
    }
  }

  private void check(ShardCoordinatorInput.ViewObserved view) {
    Map<Integer, List<String>> working = new HashMap<>();
    for (Runner runner : runners) {
      if (runner.state != RunnerState.CONTENDING) {
        working.computeIfAbsent(runner.shard, shard -> new ArrayList<>()).add(runner.member);
      }
    }
    working.forEach((shard, members) -> {
      if (members.size() > 1) {
        overlaps.add("step " + now + ": shard " + shard + "'s work runs in " + members);
      }
    });
    boolean anyMember = nodes.values().stream()
        .anyMatch(node -> node.coordinator.phase() instanceof ShardCoordinatorPhase.Member);
    boolean healthy = anyMember && view.liveMembers().stream().allMatch(member -> nodes.containsKey(member)
        && nodes.get(member).coordinator.phase() instanceof ShardCoordinatorPhase.Member);
    for (int shard = 0; shard < shards; shard++) {
      healthyFreeFor[shard] = view.holders().containsKey(shard) || !healthy ? 0 : healthyFreeFor[shard] + 1;
      maxHealthyFreeSteps = Math.max(maxHealthyFreeSteps, healthyFreeFor[shard]);
      if (healthyFreeFor[shard] == HEALTHY_FREE_BOUND_STEPS + 1) {
        longFree.add("step " + now + ": shard " + shard + " free for " + healthyFreeFor[shard]
            + " steps while every live member runs, live " + view.liveMembers());
      }
      freeFor[shard] = view.holders().containsKey(shard) || !anyMember ? 0 : freeFor[shard] + 1;
      maxFreeSteps = Math.max(maxFreeSteps, freeFor[shard]);
    }
    ShardView shardView = new ShardView(shards, new ArrayList<>(view.liveMembers()), view.holders());
    long lastEvent = schedule.stream().mapToLong(ShardChurn.Event::step).max().orElse(0);
    if (view.liveMembers().isEmpty() || lastEvent >= now) {
      return;
    }
    // Membership has settled since the live set last changed and the last churn event happened (a lapse changes
    // no live set).
    long settledSince = Math.max(liveChangedAt, lastEvent);
    if (shardView.isFair()) {
      if (!fairSinceChange) {
        fairSinceChange = true;
        maxStepsToFair = Math.max(maxStepsToFair, now - settledSince);
      }
    } else {
      fairSinceChange = false;
      if (now - settledSince >= FAIR_BOUND_STEPS && unfair.size() < 5) {
        unfair.add("step " + now + ": not fair " + (now - settledSince) + " steps after membership last changed: "
            + shardView);
      }
    }
  }

  /** The first violation of a report's list, for the properties' messages. */
  static Optional<String> first(List<String> violations) {
    return violations.stream().findFirst();
  }
}
