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
 *       longer than its bound: {@link #gracefulBoundNanos} after a stop in a live process with nothing disturbed
 *       nor a start of a process, for a lease duration before it; else {@link #faultBoundNanos} from the end of
 *       the last fault, or {@link #crashBoundNanos} from the last crash or start of a process, whichever is
 *       later, if later than the gap's start.</li>
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
  private final String[] lastHolder;
  // (process key, shard, token) of the work stopped, per replica process.
  private final Set<String> stoppedTerms = new HashSet<>();
  private int disturbances;
  private long lastDisturbanceEnd;
  private long lastDeath = Long.MIN_VALUE / 4;
  private long lastStart = Long.MIN_VALUE / 4;

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
  long maxGracefulGapNanos;
  long maxCrashGapNanos;
  long handOvers;
  final List<String> violations = new ArrayList<>();

  ShardSimChecks(ShardSim sim) {
    this.sim = sim;
    this.shards = sim.config().shards();
    gapStart = new long[shards];
    gapGraceful = new boolean[shards];
    gapReported = new boolean[shards];
    lastToken = new int[shards];
    lastHolder = new String[shards];
    for (int i = 0; i < shards; i++) {
      running.add(new ArrayList<>());
    }
  }

  /** Fair share within: lease (the crashed member's Leases expire) twice, settle (2 retry) and 6 retry periods. */
  static long fairnessBoundNanos(long leaseNanos, long retryNanos) {
    return 3 * leaseNanos + 8 * retryNanos;
  }

  long gracefulBoundNanos() {
    ShardSim.Config c = sim.config();
    return c.retryNanos() + 20 * c.maxLatencyMillis() * 1_000_000L + 700_000_000L;
  }

  /**
   * A lease duration (the crashed holder's Leases expire, each judged from when a view last saw it change), the
   * settle time (two retry periods), two retry periods for the runner that takes it (its read, its take) and a
   * slack for the network and the callbacks: counted from the last crash or start of a process, since each can
   * delay a free shard by a lease duration (a shard assigned to a member that crashed waits for its membership to
   * expire; a process that starts sees a silent Lease as held for a lease duration from its first list).
   */
  /**
   * After a fault (the server down, a partition, a pause) every member may have lost its membership and its
   * shards, the Leases of which it could not release: each joins again once its own membership Lease is seen
   * expired (a lease duration), and while the members join one after the other the plan moves free shards between
   * them, each move a new runner that judges the unreleased Lease from its own first read (a lease duration each);
   * three lease durations and the crash bound's retry periods and slack hold over every run measured.
   */
  long faultBoundNanos() {
    return crashBoundNanos() + sim.config().leaseNanos();
  }

  /**
   * Two lease durations: the crashed member's membership Lease expires in every view (a lease duration after they
   * saw it change), only then does the plan give its shards to others, and their new runners judge each shard's
   * Lease from their own first read (another lease duration); then the settle time (two retry periods), two retry
   * periods for the take, and a slack for the network and the callbacks. Counted from the last crash or start of a
   * process: a process that starts sees a silent Lease as held for a lease duration from its first list, and plans
   * with it.
   */
  long crashBoundNanos() {
    ShardSim.Config c = sim.config();
    return 2 * c.leaseNanos() + 4 * c.retryNanos() + 20 * c.maxLatencyMillis() * 1_000_000L + 700_000_000L;
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
    if (now.isEmpty()) {
      long gap = sim.now() - gapStart[shard];
      if (gapGraceful[shard] && gapReported[shard] == false && calm(gapStart[shard])) {
        maxGracefulGapNanos = Math.max(maxGracefulGapNanos, gap);
      } else if (sim.now() > 0) {
        maxCrashGapNanos = Math.max(maxCrashGapNanos, gap);
      }
    }
    now.add(new Instance(replica, replica.process, shard, term));
    gapReported[shard] = false;
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
        }
        return;
      }
    }
  }

  void processStarted(ShardSimReplica replica) {
    lastStart = sim.now();
  }

  void processDied(ShardSimReplica replica) {
    sim.trace(() -> replica + " dies");
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
    // A fault of its own: gaps are measured from its end (a hung start delays the new owner's work).
    lastDisturbanceEnd = Math.max(lastDisturbanceEnd, until);
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

  void leaseChanged(ShardSimServer.Stored stored) {
    // The server's record is the simulation's trace; the invariants read the work, not the Leases.
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
        && lastStart < since - lease;
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
      if (!r.closing) {
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
        boolean graceful = gapGraceful[shard] && calm(gapStart[shard]);
        long from = graceful ? gapStart[shard]
            : Math.max(Math.max(gapStart[shard], lastDisturbanceEnd), Math.max(lastDeath, lastStart));
        long bound = graceful ? gracefulBoundNanos() : from == lastDisturbanceEnd ? faultBoundNanos()
            : crashBoundNanos();
        if (now - from > bound) {
          ownershipGaps++;
          gapReported[shard] = true;
          violation("shard " + shard + " has had no owner for " + (now - from) / 1_000_000 + " ms (bound "
              + bound / 1_000_000 + " ms, " + (graceful ? "graceful" : "crash or fault") + ")");
        }
      }
    }
    ShardSim.Config c = sim.config();
    if (now >= c.faultEndNanos() + fairnessBoundNanos(c.leaseNanos(), c.retryNanos()) && fairnessViolations == 0
        && live > 0) {
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
