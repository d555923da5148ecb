package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;

/**
 * The invariants of the sharding simulation, checked as the work of each shard starts and stops and at every probe
 * (each 20 ms of simulated time):
 * <ul>
 *   <li>{@code shard_overlaps}: no shard's work runs twice at once (two replicas, or two runners of one), counting a
 *       shard that a replica answers as its own ({@link ShardedRunner#ownedShards()}) as work running there. Work
 *       left running in a paused process, or by a stop that outlives the stop timeout, is excused against other
 *       processes from then on (fencing guards it: its term's writes are refused), as in {@link SimInvariants};
 *       never against a new start in its own process.</li>
 *   <li>{@code token_regressions}: the fencing token (leaseTransitions) of each term a shard's work starts under is
 *       strictly greater than the one before whenever the owner changes (and never lower when it stays).</li>
 *   <li>{@code stale_terms}: a replica never answers a shard as its own under a term whose work it already
 *       stopped.</li>
 *   <li>{@code early_leaves}: a replica releases its membership Lease only once no work of its runs.</li>
 *   <li>{@code fairness_violations}: from {@link #fairnessBoundNanos} after the quiet phase began (no fault, no
 *       churn), every shard is owned by exactly one live replica and each owns {@code floor(S/M)} or {@code
 *       ceil(S/M)}.</li>
 *   <li>{@code ownership_gaps}: while a replica lives and no fault is active, no shard has no work running for
 *       longer than its bound ({@link #gapBounds}): the graceful one after a stop in a live process with nothing
 *       disturbed nor a start of a process for a lease duration before it, nor a crash within the crash bound;
 *       else the fault bound from the end of the last fault or from the latest first list of a list and watch that
 *       failed ({@link #listedAfterFailure}), or the crash bound from the last crash or start of a process,
 *       whichever is later, if later than the gap's start. Checked at each probe and, exactly, as the
 *       gap ends (the waits of the shard's callbacks for their pool threads left out: {@link #poolWaits}).</li>
 *   <li>{@code late_lists}: a list and watch that failed lists again within the back-off's cap (about a retry
 *       period) and a round trip of the later of its failure and the fault's end, and within a round trip of the
 *       first answer of the server to one of the replica's Lease calls after that failure, when one came after the
 *       fault's end ({@link ShardViewFeed#answered}).</li>
 *   <li>{@code partial_list_plans}: no replica contends for a shard from a part of its first list, where the
 *       shard's Lease, held by a member the list shows live, has not been reported yet ({@link #contends}).</li>
 *   <li>{@code loss_stops} (violations): a replica whose loss policy said not to contend again (a {@link LossHandler}'s
 *       {@code STOP}, or an {@code EXIT} whose exiter returned: {@link ShardSim.OnLoss}) starts no shard's work from
 *       then on, stops within {@link #lossLeaveBoundNanos}, says why in {@code failure()}, and once stopped is not
 *       ready, answers no shard, runs no work (but a hung stop's) and writes no Lease while its process lingers
 *       ({@link #lossStop}); its shards are owned again within the gap bounds, as after any stop.</li>
 * </ul>
 */
final class ShardSimChecks {

  private record Instance(ShardSimReplica replica, int process, int shard, LeadershipTerm term) {}

  private final ShardSim sim;
  private final int shards;
  private final List<List<Instance>> running = new ArrayList<>();
  private final long[] gapStart;
  private final boolean[] gapGraceful;
  private final boolean[] gapReported;
  private final int[] lastToken;
  private final ShardLeases shardLeases;
  // By shard, during its gap: whether its Lease was taken since the gap began; takes given up since it began.
  private final boolean[] takenInGap;
  private final List<List<Long>> givenUp = new ArrayList<>();
  // By shard, during its gap: the waits for a pool thread of its callbacks that ran and started no work ([since, ran]).
  private final List<List<long[]>> idleWaits = new ArrayList<>();
  private final int[] lastTransitions;
  private final String[] lastHolder;
  // (process key, shard, token) of the work stopped, per replica process.
  private final Set<String> stoppedTerms = new HashSet<>();
  private int disturbances;
  private long lastDisturbanceEnd;
  // When the last callback the fault phase hung ran (ShardSim#hungDelay: up to the stop timeout and 3 leases after it).
  private long lastHungEnd;
  private long lastDeath = Long.MIN_VALUE / 4;
  private long lastStart = Long.MIN_VALUE / 4;
  // When a list and watch that failed last listed again (a fault's or a start's during one): see gapFrom.
  private long lastListAfterFailure = Long.MIN_VALUE / 4;

  // Hand-overs the server stored (a term written for a named successor), and those whose successor renewed that very
  // term (took it in with no take of its own); the last record of each shard, to tell them.
  int handOversWritten;
  int handOversTakenIn;
  private final LeaseRecord[] lastRecord;
  int shardOverlaps;
  int tokenRegressions;
  int staleTerms;
  int earlyLeaves;
  // Membership deletes the server applied; deletes that removed a newer record or a shard Lease (violations);
  // closed replicas that sent their delete; closed replicas whose released membership Lease stayed, no delete sent.
  int membershipDeletes;
  int newerDeleted;
  int cleanCloses;
  int membershipLeasesLeft;
  int fairnessViolations;
  int ownershipGaps;
  int takesGivenUp;
  // Lists and watches the runners restarted after a silence of their view (ShardViewFeed.checkSilence).
  int viewRestarts;
  // Lists of a list and watch left unanswered (ShardSimFaults.scheduleUnansweredLists).
  int unansweredLists;
  // Lists after a failure later than the back-off's cap and a round trip after the failure or the fault's end.
  int lateLists;
  // Shards a replica contended for from a part of its first list, held by a live member that list has (contends).
  int partialListPlans;
  // The longest wait of a list after a failure, from the later of the failure and the fault's end; how many.
  long maxListWaitNanos;
  long listsAfterFailure;
  // The most takes given up within one gap's bound, since its clock started.
  int maxGivenUp;
  // By GapKind: the longest gap at its end, counted as its bound counts it; its largest share of its bound; how many.
  final long[] maxGapNanos = new long[GapKind.values().length];
  final double[] maxGapShare = new double[GapKind.values().length];
  final long[] gapsMeasured = new long[GapKind.values().length];
  long handOvers;
  // Replicas whose loss policy said not to contend again (a handler's STOP, an exiter that returned); those of them
  // that stopped; the longest from the policy's answer to the stop; what a replica did that it must not once its
  // policy said so (a shard's work started, ready, a Lease written, a shard answered or run once stopped, no failure).
  int lossStops;
  int lossLeaves;
  long maxLossLeaveNanos;
  double maxLossLeaveShare;
  int lossStopViolations;
  final List<String> violations = new ArrayList<>();

  ShardSimChecks(ShardSim sim) {
    this.sim = sim;
    this.shards = sim.config().shards();
    gapStart = new long[shards];
    gapGraceful = new boolean[shards];
    gapReported = new boolean[shards];
    lastToken = new int[shards];
    shardLeases = new ShardLeases(ShardSim.LEASE, shards);
    takenInGap = new boolean[shards];
    lastTransitions = new int[shards];
    lastRecord = new LeaseRecord[shards];
    lastHolder = new String[shards];
    for (int i = 0; i < shards; i++) {
      running.add(new ArrayList<>());
      queued.add(new ArrayList<>());
      givenUp.add(new ArrayList<>());
      idleWaits.add(new ArrayList<>());
    }
  }

  /**
   * Fair share within this of the quiet phase's start ({@link #fairnessDueNanos}): three lease durations (the Leases
   * of members that crashed or lapsed in the faults expire, a view that listed again after them judges a silent
   * membership Lease live for one more from that list, and a shard Lease that a stop which outlived the stop timeout
   * left behind expires), settle (2 retry periods) and 6 retry periods.
   */
  static long fairnessBoundNanos(long leaseNanos, long retryNanos) {
    return 3 * leaseNanos + 8 * retryNanos;
  }

  /**
   * From when the fair share is checked: {@link #fairnessBoundNanos} after the faults' end, or after the last callback
   * the fault phase hung ran, if later. A hung callback is a fault of the pool's (a start waiting that long for its
   * thread, or a stop outliving the stop timeout), and its tail outlasts the fault phase by up to the stop timeout
   * and three lease durations: a shard whose start still waits for its thread is owned by no one, and a stop queued
   * behind it outlives the stop timeout, so its Lease is left to expire and its replica gives up its shards, as
   * docs/sharding.md states (SimulationShardingHungStartFairness).
   */
  long fairnessDueNanos() {
    ShardSim.Config c = sim.config();
    return Math.max(c.faultEndNanos(), lastHungEnd) + fairnessBoundNanos(c.leaseNanos(), c.retryNanos());
  }

  /** Which bound a gap is held to: see {@link GapBounds}. */
  enum GapKind { GRACEFUL, CRASH, FAULT }

  /**
   * The ownership-gap bounds of a run, each a formula of the lease duration {@code L} and a round trip {@code rtt}
   * (two legs of the run's latency bound), plus {@code givenUpNanos} for each take given up since the gap's clock
   * started; see {@link #gapBounds} for each term's reason. A gap is counted up to its start's hand-off to the
   * pool: the time the start then waits for a pool thread (the user-code executor's, up to {@link
   * ShardSim#MAX_CALLBACK_DELAY_NANOS}) is left out, as is that of a start during the gap that ran and started nothing
   * ({@link #poolWaits}).
   */
  record GapBounds(long gracefulNanos, long crashNanos, long faultNanos, long givenUpNanos) {
    /** The formulas, as the SHARDING line prints them ({@code g}: takes given up during the gap). */
    static final String FORMULAS = "graceful=3rtt+2g*rtt crash=1.001L+3rtt+2g*rtt"
        + (ShardSimReplica.PREFLIGHT ? " (from a start: +1rtt, its preflight)" : "") + " fault=1.001L+3rtt+2g*rtt";

    /** The bound of a gap of {@code kind} during which {@code givenUp} takes were given up. */
    long of(GapKind kind, int givenUp) {
      return givenUp * givenUpNanos + switch (kind) {
        case GRACEFUL -> gracefulNanos;
        case CRASH -> crashNanos;
        case FAULT -> faultNanos;
      };
    }
  }

  /**
   * The tightest bounds the protocol gives, term by term; none has a retry period or a fixed slack, since nothing on
   * these paths waits for one.
   *
   * <p><b>Graceful</b> (a hand-over in a live process, counted from its work's stop): a renewal of the old owner's
   * may be on its way as the stop returns, and its release waits for that answer (one round trip); the release
   * (one leg); the server sends the change to every list and watch (one leg); the new owner's plan now shows the
   * shard free, and the runner it starts takes the Lease with its first request, the released record's
   * resourceVersion as precondition (one round trip): {@code 3rtt}.
   *
   * <p><b>Crash</b> (counted from the crash, or from the start of a process): the dead holder's last writes land and
   * reach every list and watch within a round trip; each view judges its membership and shard Leases expired a lease
   * duration later on its own clock (which may run 0.1 % fast: {@code 1.001L}); the plan then gives the shard to a
   * member whose new runner, told what the view saw and since when ({@code LeaseProtocol.seen}), judges it expired at
   * once: a read and a take ({@code 2rtt}). A process that starts judges a silent Lease from its first list, which
   * it sends once its membership runner's RBAC preflight let it contend (a replica the preflight stops lists
   * nothing): the rules review's round trip, then the list's answer (a round trip; one leg here), so the same bound
   * counts from one round trip after the start ({@link #startNanos}; from the start itself without the preflight).
   *
   * <p><b>Fault</b> (counted from the end of the last fault, or from when the last leg it delayed may land, a slow
   * network's or a delayed watch event's latency after it, up to 500 ms: {@link #lingers}): every Lease a member
   * could not renew or release during the fault is judged expired a lease duration after each view last saw it
   * change, which was before the fault's legs all landed; a member that lost its membership Lease takes it back at
   * once (its own last term) and plans with the rest;
   * the same steps as after a crash follow: the crash's bound. A replica whose list and watch failed during the fault
   * judges the Leases it had not seen change from its first list after it (a departed member's silent Lease is live
   * for a lease duration from there): the clock then starts at the latest such list ({@link #listedAfterFailure}),
   * which comes at the first answer of the server to one of the replica's Lease calls, or at its back-off's next
   * try at the latest.
   *
   * <p><b>A take given up</b> ({@code 2rtt} each, found by this simulation): while several shards become free one after
   * the other (a leaver's releases, Leases judged expired at slightly different times), each new free shard can
   * change the plan of the ones freed before (free shards fill the quotas in ascending order), and a runner whose
   * take is on its way is closed as not planned: its take lands, the closing runner releases it with no work started,
   * and the member the plan now names takes it (the take's answer, the release, its event, the next take: two round
   * trips). A hand-over the same way: old owners that each fill the same lacking member (none sees the others'
   * hand-overs yet) hand it more than its share; it takes each in, its plan keeps its share and closes the runners of
   * the rest, and each such runner, its work not started, hands the shard on by name to the member that lacks it (or
   * declines it: a release) (the hand-over's answer, the write, its event: two round trips; {@code
   * SimulationShardingHandOverPassedOn}). {@link #leaseChanged} counts these takes per gap, and only those since the
   * gap's clock started count; up to 6 were seen within one gap's bound.
   *
   * <p>A gap leaves out every wait of a callback of the shard's runners for its pool thread during the gap (the
   * user-code executor's, not the protocol's): the start's that ends it, and those of starts that ran and started
   * nothing, whose runner, closed while its start waited, held the Lease until that start had run ({@link
   * #poolWaits}).
   */
  static GapBounds gapBounds(long leaseNanos, long maxLatencyNanos) {
    long rtt = 2 * maxLatencyNanos;
    long crash = leaseNanos + leaseNanos / 1000 + 3 * rtt;
    return new GapBounds(3 * rtt, crash, crash, 2 * rtt);
  }

  GapBounds gapBounds() {
    ShardSim.Config c = sim.config();
    return gapBounds(c.leaseNanos(), c.maxLatencyMillis() * 1_000_000L);
  }

  long crashBoundNanos() {
    return gapBounds().crashNanos();
  }

  boolean passed() {
    return violations.isEmpty();
  }

  private void violation(String what) {
    if (violations.size() < 20) {
      violations.add(String.format("%.3fms %s", sim.now() / 1e6, what));
    }
    sim.trace(() -> "VIOLATION " + what);
  }

  // ---- as it happens ---------------------------------------------------------------------------------------

  void workStarted(ShardSimReplica replica, int shard, LeadershipTerm term) {
    sim.trace(() -> replica + " starts shard " + shard + " token " + term.leaseTransitions());
    if (replica.lossStopAt >= 0) {
      lossStopViolation(replica + " starts shard " + shard + "'s work after its loss policy said not to contend "
          + "again (at " + replica.lossStopAt / 1_000_000 + " ms)");
    }
    List<Instance> now = running.get(shard);
    for (Instance other : now) {
      // Another process's work that a pause or a hung stop left running is fencing's to guard; never this one's.
      boolean sameProcess = other.replica() == replica && other.process() == replica.process;
      if (sameProcess || !excusedNow(other)) {
        shardOverlaps++;
        violation("shard " + shard + " starts in " + replica + " while it runs in " + other.replica() + "/p"
            + other.process());
      }
    }
    int token = term.leaseTransitions();
    if (lastHolder[shard] != null && (lastHolder[shard].equals(replica.identity) ? token < lastToken[shard]
        : token <= lastToken[shard])) {
      tokenRegressions++;
      violation("shard " + shard + " starts in " + replica + " under token " + token + " after " + lastHolder[shard]
          + "'s " + lastToken[shard]);
    }
    lastHolder[shard] = replica.identity;
    lastToken[shard] = Math.max(lastToken[shard], token);
    if (now.isEmpty() && disturbances == 0 && !gapReported[shard] && sim.now() > 0) {
      // The gap as its bound counts it (from its clock's start), at its end: what the bounds leave to spare.
      GapKind kind = gapKind(shard);
      long gap = sim.now() - gapFrom(shard, kind) - poolWaits(shard, gapFrom(shard, kind));
      long bound = gapBounds().of(kind, givenUpSince(shard, gapFrom(shard, kind)));
      if (gap > bound) {
        gapViolation(shard, kind, gap, bound);
      }
      maxGapNanos[kind.ordinal()] = Math.max(maxGapNanos[kind.ordinal()], gap);
      maxGapShare[kind.ordinal()] = Math.max(maxGapShare[kind.ordinal()], (double) gap / bound);
      gapsMeasured[kind.ordinal()]++;
      sim.trace(() -> "shard " + shard + " owned again after a " + kind + " gap of " + gap / 1_000_000 + " ms (bound "
          + bound / 1_000_000 + " ms)");
    }
    now.add(new Instance(replica, replica.process, shard, term));
    gapReported[shard] = false;
  }

  /** A callback of a shard's runner, handed to the pool at {@code since}, waiting for its thread. */
  static final class Queued {
    final ShardSimReplica replica;
    final int process;
    final int shard;
    final long since;

    Queued(ShardSimReplica replica, int shard, long since) {
      this.replica = replica;
      this.process = replica.process;
      this.shard = shard;
      this.since = since;
    }
  }

  // By shard: the callbacks of its runners that wait for a pool thread; the one that runs now, if any.
  private final List<List<Queued>> queued = new ArrayList<>();
  private Queued runningCallback;

  Queued callbackQueued(ShardSimReplica replica, int shard) {
    Queued q = new Queued(replica, shard, sim.now());
    queued.get(shard).add(q);
    return q;
  }

  void callbackRuns(Queued q) {
    queued.get(q.shard).remove(q);
    runningCallback = q;
  }

  void callbackRan(Queued q) {
    runningCallback = null;
    if (running.get(q.shard).isEmpty() && sim.now() > q.since) {
      // It ran and no work of the shard runs: a start that started nothing (its runner closed meanwhile), whose
      // runner held the Lease while it waited (see poolWaits).
      idleWaits.get(q.shard).add(new long[] {q.since, sim.now()});
    }
  }

  /**
   * How long, since {@code from}, the callbacks of {@code shard}'s runners waited for their pool threads during its
   * gap (overlapping waits counted once): the user-code executor's delay, not the protocol's, which the gap bounds
   * leave out (they count the gap up to the start's hand-off). The start that ends the gap now, and every callback
   * that ran during it and started no work: the start of a member that was handed the shard and took it in, whose plan
   * then found it surplus (old owners each fill the same lacking member: {@link ShardHandOvers#follow}) and closed its
   * runner while that start waited for its thread; the runner hands the shard on (or releases it) only once that
   * start ran, and held its Lease meanwhile (seed 43472570: a 44 ms wait, {@code SimulationShardingHandOverPassedOn}).
   */
  private long poolWaits(int shard, long from) {
    List<long[]> waits = new ArrayList<>(idleWaits.get(shard));
    Queued q = runningCallback;
    if (q != null && q.shard == shard) {
      waits.add(new long[] {q.since, sim.now()});
    }
    waits.sort(java.util.Comparator.comparingLong(w -> w[0]));
    long total = 0;
    long covered = from;
    for (long[] w : waits) {
      long start = Math.max(w[0], covered);
      if (w[1] > start) {
        total += w[1] - start;
        covered = w[1];
      }
    }
    return total;
  }

  /**
   * Whether a callback of {@code shard}'s runner in a live process was handed to its pool at most {@code bound}
   * after {@code from}: a start that may end the gap in time, which is judged when it runs.
   */
  private boolean startQueuedWithin(int shard, long from, long bound) {
    for (Queued q : queued.get(shard)) {
      if (q.replica.alive && q.replica.process == q.process && q.since - from - poolWaits(shard, from) <= bound) {
        return true;
      }
    }
    return false;
  }

  void workStopped(ShardSimReplica replica, int shard) {
    sim.trace(() -> replica + " stops shard " + shard);
    List<Instance> now = running.get(shard);
    for (int i = 0; i < now.size(); i++) {
      Instance instance = now.get(i);
      if (instance.replica() == replica && instance.process() == replica.process) {
        now.remove(i);
        excusedKeys.remove(key(instance));
        stoppedTerms.add(replica.identity + "/" + replica.process + "/" + shard + "/" + termKey(instance.term()));
        handOvers++;
        if (now.isEmpty()) {
          gapStart[shard] = sim.now();
          gapGraceful[shard] = true;
          givenUp.get(shard).clear();
          idleWaits.get(shard).clear();
          takenInGap[shard] = false;
        }
        return;
      }
    }
  }

  // ---- a loss policy that stops the replica -----------------------------------------------------------------

  /**
   * The loss policy of {@code replica} said not to contend again (its {@link LossHandler} answered {@code STOP}, or
   * its exiter returned): from now on the replica must leave as a close does, and, until its process ends, start no
   * shard's work ({@link #workStarted}), never be ready, and once stopped run and answer no shard and write no Lease
   * ({@link #probe}, {@link #writes}); its shards are owned again within the gap bounds, as any stop's are.
   */
  void lossStop(ShardSimReplica replica) {
    Queued callback = runningCallback; // the handler, or the exiter, runs on the lost shard's lane
    sim.trace(() -> replica + "'s loss policy said not to contend again"
        + (callback == null ? "" : " (shard " + callback.shard + ")"));
    if (replica.lossStopAt < 0) {
      lossStops++;
      replica.lossStopAt = sim.now();
    }
  }

  /**
   * How long a replica may take to stop once its loss policy said not to contend again, counted from that answer or
   * from the end of a pause of its process since, whichever is later: the lost shard's runner finishes its elector
   * (after a loss at the renew deadline a read, then a release if a renewal landed after all: two calls, each ended by
   * its answer or its request timeout {@code T}) and stops; the replica marks itself leaving and waits for its view
   * to show the mark (at most settle, two retry periods {@code R}); each shard's stop waits for a pool thread (up to
   * {@link ShardSim#MAX_CALLBACK_DELAY_NANOS}) and returns, or is given up at the stop timeout {@code S}; each
   * hand-over waits for a renewal on its way and writes (two calls); a replica that began leaving first may keep it
   * declining for a lease duration {@code L}; then the membership Lease's renewal on its way, release and delete
   * (three calls). With margin: {@code 8T + 4R + S + L + 300 ms}.
   */
  long lossLeaveBoundNanos() {
    ShardSim.Config c = sim.config();
    return 8 * c.timeoutMillis() * 1_000_000L + 4 * c.retryNanos() + c.stopTimeoutMillis() * 1_000_000L
        + c.leaseNanos() + ShardSim.MAX_CALLBACK_DELAY_NANOS;
  }

  /** The runner of {@code replica}, whose loss policy said not to contend again, stopped. */
  void lossStopped(ShardSimReplica replica) {
    lossLeaves++;
    long leave = sim.now() - Math.max(replica.lossStopAt, replica.resumedAt);
    maxLossLeaveNanos = Math.max(maxLossLeaveNanos, leave);
    maxLossLeaveShare = Math.max(maxLossLeaveShare, (double) leave / lossLeaveBoundNanos());
    if (replica.runner.failure().isEmpty()) {
      lossStopViolation(replica + " stopped after its loss policy said not to contend again, and failure() says "
          + "nothing");
    }
  }

  /** A Lease write of {@code replica}'s process {@code process}: none once its runner stopped after a loss. */
  void writes(ShardSimReplica replica, int process, String lease) {
    if (replica.process == process && replica.alive && replica.lossStopAt >= 0 && replica.runner != null
        && replica.runner.isStopped()) {
      lossStopViolation(replica + " writes " + lease + " after it stopped on a loss");
    }
  }

  /**
   * At each probe, {@code replica} after its loss policy said not to contend again, once its runner stopped (while
   * it leaves it is as ready as a closing replica: under {@code Readiness.CONNECTED}, while its membership Lease is
   * renewed): not ready, no shard answered as its own, and no work of its running (but a hung stop's, left behind
   * with its Lease to expire).
   */
  private void checkLossStop(ShardSimReplica replica, long now) {
    if (!replica.runner.isStopped()) {
      long leaving = now - Math.max(replica.lossStopAt, replica.resumedAt);
      if (leaving > lossLeaveBoundNanos() && !replica.leaveLate) {
        replica.leaveLate = true;
        lossStopViolation(replica + " has not stopped " + leaving / 1_000_000 + " ms after its loss policy said not "
            + "to contend again (bound " + lossLeaveBoundNanos() / 1_000_000 + " ms)");
      }
      return;
    }
    if (replica.runner.health().ready()) {
      lossStopViolation(replica + " stopped on a loss and is ready");
    }
    if (!replica.runner.ownedShards().isEmpty()) {
      lossStopViolation(replica + " stopped on a loss and answers " + replica.runner.ownedShards().keySet()
          + " as its own");
    }
    for (List<Instance> of : running) {
      for (Instance i : of) {
        if (i.replica() == replica && i.process() == replica.process && !excusedNow(i)) {
          lossStopViolation(replica + " stopped on a loss while its work for shard " + i.shard() + " runs");
          return;
        }
      }
    }
  }

  /** At the run's end: a replica whose loss policy said not to contend again has stopped (and its process ended). */
  void end() {
    for (ShardSimReplica r : sim.replicas()) {
      if (r.alive && r.runner != null && r.lossStopAt >= 0 && !r.runner.isStopped()) {
        lossStopViolation(r + " never stopped after its loss policy said not to contend again (at "
            + r.lossStopAt / 1_000_000 + " ms)");
      }
    }
  }

  private void lossStopViolation(String what) {
    lossStopViolations++;
    violation(what);
  }

  void processStarted(ShardSimReplica replica) {
    lastStart = sim.now();
  }

  void processDied(ShardSimReplica replica) {
    sim.trace(() -> replica + " dies");
    for (List<Queued> of : queued) {
      of.removeIf(q -> q.replica == replica);
    }
    lastDeath = sim.now();
    for (int shard = 0; shard < shards; shard++) {
      List<Instance> now = running.get(shard);
      boolean had = !now.isEmpty();
      now.removeIf(i -> {
        if (i.replica() == replica) {
          excusedKeys.remove(key(i));
          return true;
        }
        return false;
      });
      if (had && now.isEmpty()) {
        gapStart[shard] = sim.now();
        gapGraceful[shard] = false;
        givenUp.get(shard).clear();
        idleWaits.get(shard).clear();
        takenInGap[shard] = false;
      }
    }
  }

  private final Set<String> excusedKeys = new HashSet<>();

  private static String key(Instance i) {
    return i.replica().slot + "/" + i.process() + "/" + i.shard();
  }

  private static String termKey(LeadershipTerm term) {
    return term.leaseTransitions() + "@" + term.acquireTime();
  }

  private boolean excusedNow(Instance instance) {
    return excusedKeys.contains(key(instance));
  }

  void paused(ShardSimReplica replica) {
    for (List<Instance> of : running) {
      for (Instance i : of) {
        if (i.replica() == replica) {
          excusedKeys.add(key(i));
        }
      }
    }
  }

  /** The next callback of {@code shard}'s runner in {@code replica} hangs: its work, if it runs, is excused. */
  void hung(ShardSimReplica replica, int shard, long until) {
    // A fault of its own: gaps are measured from its end (a hung start delays the new owner's work), and so is the
    // fair share (fairnessDueNanos).
    lastDisturbanceEnd = Math.max(lastDisturbanceEnd, until);
    lastHungEnd = Math.max(lastHungEnd, until);
    for (Instance i : running.get(shard)) {
      if (i.replica() == replica && i.process() == replica.process) {
        excusedKeys.add(key(i));
      }
    }
  }

  void membershipReleased(ShardSimReplica replica, int process) {
    for (List<Instance> of : running) {
      for (Instance i : of) {
        // A hung stop's work is left behind with its Lease to expire (SHARD_ABANDONED), as documented.
        if (i.replica() == replica && i.process() == process && !excusedNow(i)) {
          earlyLeaves++;
          violation(replica + " released its membership Lease while its work for shard " + i.shard() + " runs");
          return;
        }
      }
    }
  }

  /** A delete the server applied: it must have removed exactly the record the replica released, nothing newer. */
  void membershipDeleted(ShardSimReplica replica, ShardSimServer.Stored removed, LeaseRecord released) {
    membershipDeletes++;
    if (removed.record().holder() != null || !removed.record().resourceVersion().equals(released.resourceVersion())) {
      newerDeleted++;
      violation(replica + " deleted " + removed.name() + " at rv " + removed.record().resourceVersion() + " (holder "
          + removed.record().holder() + ") after releasing rv " + released.resourceVersion());
    }
  }

  /** Shard Leases are shared and reused: never deleted. */
  void shardLeaseDeleteSent(ShardSimReplica replica, String lease) {
    newerDeleted++;
    violation(replica + " sent a delete of the shard Lease " + lease);
  }

  /** A closed replica stopped: its membership Lease must be gone, unless its release was not a clean close's. */
  void closedReplicaStopped(ShardSimReplica replica) {
    if (replica.membershipDeleteSent()) {
      cleanCloses++;
    }
    if (replica.membershipLeftAsReleased()) {
      membershipLeasesLeft++;
    }
  }

  /**
   * The server stored {@code stored}. A shard Lease taken (or handed over) while no work of the shard runs, then
   * released or handed on by name before any started (its new runner was closed first: a plan that moved the free
   * shard while the take was on its way, or found a hand-over beyond its share), is a take given up: each costs the gap
   * of that shard a few more round trips ({@link #gapBounds}).
   */
  void leaseChanged(ShardSimServer.Stored stored) {
    if (!(shardLeases.parse(stored.name()) instanceof ShardLeases.Kind.Shard s) || s.shard() >= shards) {
      return;
    }
    int shard = s.shard();
    LeaseRecord record = stored.record();
    LeaseRecord before = lastRecord[shard];
    if (record.handOverProof() != null) {
      handOversWritten++;
    } else if (before != null && before.handOverProof() != null && record.sameTerm(before)
        && java.util.Objects.equals(record.holder(), before.holder())) {
      handOversTakenIn++; // the successor's first renewal of the term it was handed: it took it in unwritten
    }
    lastRecord[shard] = record;
    if (!running.get(shard).isEmpty()) {
      takenInGap[shard] = false;
    } else if (record.holder() != null && record.transitions() != lastTransitions[shard]) {
      if (takenInGap[shard] && record.handOverProof() != null && before != null && before.holder() != null) {
        // A term taken or handed over during the gap, handed on by name with no work started (a member handed more
        // than its share passes the surplus on): a take given up, as a decline's release is. (A take after the
        // expiry of a term no one took in is not: the crash and fault bounds count that wait.)
        givenUp.get(shard).add(sim.now());
        takesGivenUp++;
        sim.trace(() -> "shard " + shard + ": a hand-over passed on before its work started");
      }
      takenInGap[shard] = true;
    } else if (record.holder() == null && takenInGap[shard]) {
      takenInGap[shard] = false;
      givenUp.get(shard).add(sim.now());
      takesGivenUp++;
      sim.trace(() -> "shard " + shard + ": a take given up before its work started");
    }
    lastTransitions[shard] = record.transitions();
  }

  /**
   * A list and watch of {@code replica} that failed at {@code failedAt} (during a fault, or opened during one) listed
   * again now: its view judges a Lease it had not seen change from now (a departed member's, silent, counts as live
   * for a lease duration from this list), so the crash and fault bounds count from the latest such list ({@link
   * #gapFrom}). That list must come within the back-off's cap (about a retry period) and a round trip of the later
   * of the failure and the fault's end: its informer's next try at the latest, and at the first answer of the server
   * to one of the replica's Lease calls when that comes first ({@link ShardViewFeed#answered}). Its wait is counted
   * to {@code arrivedAt}, when the list's answer arrived; the bounds' clock starts now, once it was reported in whole
   * (its Leases are reported one at a time: {@link ShardSim}).
   */
  void listedAfterFailure(ShardSimReplica replica, long failedAt, long answeredAt, long arrivedAt) {
    lastListAfterFailure = Math.max(lastListAfterFailure, sim.now());
    long now = arrivedAt;
    long from = Math.max(failedAt, lastDisturbanceEnd);
    long wait = now - from;
    long bound = sim.backoffCapNanos() + 2 * sim.config().maxLatencyMillis() * 1_000_000L;
    listsAfterFailure++;
    if (disturbances == 0 && wait > bound) {
      lateLists++;
      violation(replica + "'s list and watch listed " + wait / 1_000_000 + " ms after it could (bound " + bound
          / 1_000_000 + " ms: the back-off's cap and a round trip)");
    }
    if (disturbances == 0) {
      maxListWaitNanos = Math.max(maxListWaitNanos, Math.max(0, wait));
    }
    // And within a round trip of the first answer of the server to a Lease call of the replica's after its sink heard
    // of the failure, if one came after the fault's end: the runner lists again at that answer, not at its back-off.
    long rtt = 2 * sim.config().maxLatencyMillis() * 1_000_000L;
    if (disturbances == 0 && answeredAt >= 0 && answeredAt > lastDisturbanceEnd && now - answeredAt > rtt) {
      lateLists++;
      violation(replica + "'s list and watch listed " + (now - answeredAt) / 1_000_000 + " ms after the server "
          + "answered one of its Lease calls (bound " + rtt / 1_000_000 + " ms: a round trip)");
    }
    sim.trace(() -> replica + " listed after a failure, " + wait / 1_000_000 + " ms after it could");
  }

  /**
   * {@code replica} made a runner for {@code shard}: it contends for it. Never from a part of its first list: while
   * the first list of its list and watch is being reported, a shard whose Lease that list has and has not reported
   * yet, held by another member whose membership Lease the list has as held and not leaving (a live member), looks
   * free to it only because its Lease is still on its way; a replica that plans then takes shards beyond its share
   * ({@code partial_list_plans}). The real runner plans only once that list was reported in whole.
   */
  void contends(ShardSimReplica replica, int shard) {
    ShardSim.FirstList list = sim.firstListInProgress(replica);
    String name = shardLeases.shardLease(shard);
    if (list == null || !list.unreported().contains(name)) {
      return;
    }
    String holder = list.leases().get(name).record().holder();
    ShardSimServer.Stored member = holder == null || holder.equals(replica.identity) ? null
        : list.leases().get(shardLeases.memberLease(holder));
    if (member != null && holder.equals(member.record().holder()) && !member.leaving()) {
      partialListPlans++;
      violation(replica + " contended for shard " + shard + " from a part of its first list: the list has its Lease "
          + "held by " + holder + ", a live member, not reported yet (" + list.unreported().size() + " of "
          + list.leases().size() + " Leases still on their way)");
    }
  }

  /** A fault that just ended delayed legs sent during it by up to {@code nanos}: for the gaps it ends as they land. */
  void lingers(long nanos) {
    lastDisturbanceEnd = Math.max(lastDisturbanceEnd, sim.now() + nanos);
  }

  void disturbance(int delta) {
    disturbances += delta;
    if (delta < 0) {
      lastDisturbanceEnd = Math.max(lastDisturbanceEnd, sim.now());
    }
  }

  /**
   * No fault active now, none since a lease duration before {@code since}, no start of a process since then (its
   * fresh view takes a silent Lease as held for a lease duration, and plans with it), and no crash within the crash
   * bound.
   */
  private boolean calm(long since) {
    long lease = sim.config().leaseNanos();
    return disturbances == 0 && lastDisturbanceEnd < since - lease && lastDeath < since - crashBoundNanos()
        && lastStart < since - lease && lastListAfterFailure < since - lease;
  }

  /** The takes of {@code shard} given up in its gap since {@code from}: only those delay it past its clock's start. */
  private int givenUpSince(int shard, long from) {
    int n = 0;
    for (long at : givenUp.get(shard)) {
      n += at - from >= 0 ? 1 : 0;
    }
    maxGivenUp = Math.max(maxGivenUp, n);
    return n;
  }

  private void gapViolation(int shard, GapKind kind, long gap, long bound) {
    ownershipGaps++;
    gapReported[shard] = true;
    violation("shard " + shard + " has had no owner for " + gap / 1_000_000 + " ms (bound " + bound / 1_000_000
        + " ms, " + kind + ", gap began at " + gapStart[shard] / 1_000_000 + " ms)");
  }

  /** The bound a gap of {@code shard} open now is held to. */
  private GapKind gapKind(int shard) {
    if (gapGraceful[shard] && calm(gapStart[shard])) {
      return GapKind.GRACEFUL;
    }
    long from = gapFrom(shard, GapKind.CRASH);
    return from == lastDisturbanceEnd || from == lastListAfterFailure ? GapKind.FAULT : GapKind.CRASH;
  }

  /** When the clock of a gap of {@code shard} held to {@code kind} started. */
  private long gapFrom(int shard, GapKind kind) {
    return kind == GapKind.GRACEFUL ? gapStart[shard]
        : Math.max(Math.max(Math.max(gapStart[shard], lastDisturbanceEnd), lastListAfterFailure),
            Math.max(lastDeath, lastStart + startNanos()));
  }

  /**
   * How much later than its start a process's clock of the crash bound starts: with the RBAC preflight, one round
   * trip (see {@link #gapBounds}); without, none.
   */
  private long startNanos() {
    return ShardSimReplica.PREFLIGHT ? 2 * sim.config().maxLatencyMillis() * 1_000_000L : 0;
  }

  // ---- at each probe ---------------------------------------------------------------------------------------

  void probe(long now) {
    int live = 0;
    int owned = 0;
    boolean[] ownedBy = new boolean[shards];
    boolean doubly = false;
    List<ShardSimReplica> members = new ArrayList<>();
    for (ShardSimReplica r : sim.replicas()) {
      if (!r.alive || r.paused || r.runner == null) {
        continue;
      }
      if (r.lossStopAt >= 0) {
        checkLossStop(r, now);
      }
      if (!r.closing && r.lossStopAt < 0) { // one that stops on a loss leaves, as a closed one does
        live++;
        members.add(r);
      }
      SortedMap<Integer, LeadershipTerm> mine = r.runner.ownedShards();
      for (Map.Entry<Integer, LeadershipTerm> e : mine.entrySet()) {
        int shard = e.getKey();
        String stopped = r.identity + "/" + r.process + "/" + shard + "/" + termKey(e.getValue());
        if (stoppedTerms.contains(stopped)) {
          staleTerms++;
          violation(r + " answers shard " + shard + " as its own under a term whose work it stopped");
        }
        for (Instance other : running.get(shard)) {
          if (other.replica() != r && !excusedNow(other)) {
            shardOverlaps++;
            violation(r + " answers shard " + shard + " as its own while its work runs in " + other.replica());
          }
        }
        if (!r.closing) {
          doubly |= ownedBy[shard];
          ownedBy[shard] = true;
          owned++;
        }
      }
    }
    if (live > 0 && disturbances == 0) {
      for (int shard = 0; shard < shards; shard++) {
        if (!running.get(shard).isEmpty() || gapReported[shard]) {
          continue;
        }
        GapKind kind = gapKind(shard);
        long from = gapFrom(shard, kind);
        long bound = gapBounds().of(kind, givenUpSince(shard, from));
        long gap = now - from - poolWaits(shard, from);
        if (gap > bound && !startQueuedWithin(shard, from, bound)) {
          gapViolation(shard, kind, gap, bound);
        }
      }
    }
    if (now >= fairnessDueNanos() && fairnessViolations == 0 && live > 0) {
      boolean fair = owned == shards && !doubly;
      for (ShardSimReplica r : members) {
        int n = r.runner.ownedShards().size();
        fair &= n >= shards / live && n <= (shards + live - 1) / live;
      }
      if (!fair) {
        fairnessViolations++;
        StringBuilder who = new StringBuilder();
        for (ShardSimReplica r : members) {
          who.append(' ').append(r).append('=').append(r.runner.ownedShards().keySet());
        }
        violation("not a fair share of " + shards + " over " + live + ":" + who);
      }
    }
  }
}
