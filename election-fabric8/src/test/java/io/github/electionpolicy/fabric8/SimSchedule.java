package io.github.electionpolicy.fabric8;

import java.util.List;
import java.util.stream.Collectors;

/**
 * One generated run of the simulation: the replicas (each with its own timings, loss policy and clocks) and the
 * faults, each at a time within the fault phase, followed by a quiet tail with no faults at all. Every random
 * choice the simulator makes (latencies, the protocol's jitter seeds, clock origins) comes from {@link #seed},
 * so a schedule replays identically. Replica numbers in faults are taken modulo the number of replicas, so
 * jqwik can shrink the replicas and the faults independently.
 *
 * @param seed the seed of every random choice the simulator makes
 * @param replicas the replicas, 2 to 5
 * @param faults the faults, in any order
 * @param faultPhaseMillis how long faults may happen; the quiet tail follows
 * @param maxLatencyMillis the bound of one network leg's latency outside {@link Slow} faults
 */
record SimSchedule(long seed, List<ReplicaSpec> replicas, List<Fault> faults, long faultPhaseMillis,
    long maxLatencyMillis) {

  SimSchedule {
    replicas = List.copyOf(replicas);
    faults = List.copyOf(faults);
  }

  /**
   * One replica's settings. All are valid {@link LeaseSettings}: renewDeadline &lt; leaseDuration, renewDeadline
   * &gt; 1.2 × retryPeriod, 200 ms &le; requestTimeout &le; renewDeadline / 2; stopTimeout is half the safety
   * margin (leaseDuration - renewDeadline), so a leader's reconcilers are gone before a follower may start.
   *
   * @param driftPpm how much faster (+) or slower (-) its monotonic clock runs, in parts per million
   * @param wallOffsetMillis how far its wall clock is off (skew); the protocol must not care
   * @param originNearWrap whether its monotonic clock starts just below {@link Long#MAX_VALUE}
   */
  record ReplicaSpec(int leaseSeconds, long renewDeadlineMillis, long retryPeriodMillis, long requestTimeoutMillis,
      LossPolicy.Kind lossPolicy, int reconcilers, int driftPpm, long wallOffsetMillis, boolean originNearWrap,
      boolean unelected, Readiness readiness) {

    /** A contending replica, ready while connected. */
    ReplicaSpec(int leaseSeconds, long renewDeadlineMillis, long retryPeriodMillis, long requestTimeoutMillis,
        LossPolicy.Kind lossPolicy, int reconcilers, int driftPpm, long wallOffsetMillis, boolean originNearWrap) {
      this(leaseSeconds, renewDeadlineMillis, retryPeriodMillis, requestTimeoutMillis, lossPolicy, reconcilers, driftPpm,
          wallOffsetMillis, originNearWrap, false, Readiness.CONNECTED);
    }

    /** The same replica, running unelected ({@code RUN_UNELECTED}: no Lease, its services start at once). */
    ReplicaSpec asUnelected() {
      return new ReplicaSpec(leaseSeconds, renewDeadlineMillis, retryPeriodMillis, requestTimeoutMillis, lossPolicy,
          reconcilers, driftPpm, wallOffsetMillis, originNearWrap, true, readiness);
    }

    long leaseNanos() {
      return leaseSeconds * 1_000_000_000L;
    }

    long stopTimeoutMillis() {
      return (leaseSeconds * 1000L - renewDeadlineMillis) / 2;
    }

    @Override
    public String toString() {
      return "lease=" + leaseSeconds + "s renew=" + renewDeadlineMillis + "ms retry=" + retryPeriodMillis
          + "ms timeout=" + requestTimeoutMillis + "ms " + lossPolicy + " reconcilers=" + reconcilers + " drift="
          + driftPpm + "ppm skew=" + wallOffsetMillis + "ms" + (originNearWrap ? " origin~MAX" : "")
          + (unelected ? " UNELECTED" : "") + (readiness == Readiness.LEADER_ONLY ? " leader-only" : "");
    }
  }

  /** Something that goes wrong at {@link #at()} milliseconds into the run. */
  sealed interface Fault {
    long at();
  }

  /** Which way a partition cuts. */
  enum Direction { BOTH, REQUESTS_LOST, RESPONSES_LOST }

  /** The replica and the server cannot talk; with RESPONSES_LOST, writes are applied but never answered. */
  record Partition(int replica, long at, long forMillis, Direction direction) implements Fault {}

  /** The API server refuses every call and ends every watch. */
  record ServerDown(long at, long forMillis) implements Fault {}

  /** Each network leg of this replica takes up to {@code latencyMillis}: requests time out. */
  record Slow(int replica, long at, long forMillis, long latencyMillis) implements Fault {}

  /**
   * The process vanishes: no release, its reconcilers stop at once; a fresh one starts later. Every other crash
   * first goes through the runner's own crash hook ({@link RunnerHooks#crash}), which the tests use to
   * kill a replica: to the others it must look the same (the process sends nothing more).
   */
  record Crash(int replica, long at, long restartAfterMillis) implements Fault {}

  /** Stop-the-world: nothing of the process runs, timers included; on resume its reconcilers act first. */
  record Pause(int replica, long at, long forMillis) implements Fault {}

  /** close(), directly or from inside the replica's next reconciler callback; a fresh process starts later. */
  record Close(int replica, long at, boolean fromCallback, long restartAfterMillis) implements Fault {}

  /** What another client writes into the Lease. */
  enum ForeignKind { BUMP_RENEW_TIME, EDIT_HOLDER, SET_TRANSITIONS }

  /**
   * Another client writes the Lease; {@code value}: the transitions count it sets. A foreign holder promises the
   * longest lease among the replicas.
   */
  record Foreign(long at, ForeignKind kind, int value) implements Fault {}

  /** {@code kubectl delete lease}. */
  record DeleteLease(long at) implements Fault {}

  /** What goes wrong with watches. */
  enum WatchKind { DROP_EVENTS, DELAY_EVENTS, GONE }

  /** Watch events are dropped or delayed for a while, or every watch ends (410 Gone). */
  record WatchTrouble(long at, long forMillis, WatchKind kind) implements Fault {}

  /**
   * How a replica's reconcilers misbehave. START_THROWS_ERROR throws an AssertionError, START_THROWS_VM_ERROR an
   * OutOfMemoryError (a {@link VirtualMachineError}: the JVM may be broken, so the runner may not release nor
   * contend again); STOP_THROWS_ERROR a StackOverflowError.
   */
  enum Trouble {
    START_THROWS_EXCEPTION, START_THROWS_ERROR, STOP_THROWS_EXCEPTION, STOP_THROWS_ERROR, STOP_HANGS,
    START_THROWS_VM_ERROR
  }

  /** For a while, every call of that kind to this replica's reconcilers misbehaves. */
  record ReconcilerTrouble(int replica, long at, long forMillis, Trouble trouble) implements Fault {}

  /** What follows a {@link LeaderTrouble}'s misbehaviour, on the same replica. */
  enum Then { CLOSE, CLOSE_FROM_CALLBACK, PARTITION }

  /**
   * Aimed at whoever leads at {@code at} (nothing if none does): its services misbehave for a while, and a
   * quarter into that it is closed, closed from its next callback, or partitioned from the server: the runner's
   * own boundaries (a close or a loss meeting a stop that hangs or throws) that a random schedule rarely hits.
   */
  record LeaderTrouble(long at, long forMillis, Trouble trouble, Then then) implements Fault {}

  /**
   * A graceful hand-over met by a second close: the leader is closed, and {@code gapMillis} after the server
   * applied its release one of the followers, which may be taking the Lease just then.
   */
  record HandOverClose(long at, long gapMillis, int follower) implements Fault {}

  /**
   * A close that meets a renewal whose answer is lost: the leader is closed as it sends its next renewal, and that
   * one answer never comes back, though the server applies the write. The network is whole again for the calls that
   * follow, so the close must still release what the Lease shows (it reads it back once the renewal's timer gave
   * up at the renew deadline).
   */
  record CloseMeetsLostRenewalAnswer(long at) implements Fault {}

  /**
   * Every replica but the leader gets slow answers (up to {@code latencyMillis} a leg), and the leader is cut off
   * from the server {@code gapMillis} later: the followers take over on what slow reads told them, while the
   * leader's services run until its term ends.
   */
  record SlowFollowersThenLeaderCrash(long at, long latencyMillis, long gapMillis) implements Fault {}

  /**
   * A take-over that fails: for {@code forMillis} every follower's services throw from start() and their
   * answers are slow (up to {@code latencyMillis} a leg), and the leader is closed, so that a follower wins, fails
   * to start, and gives the term up while its answers dawdle.
   */
  record FailingTakeover(long at, long forMillis, long latencyMillis) implements Fault {}

  /** What breaks inside the runner's own loop task: the failure of the election logic itself. */
  enum LoopFaultKind {
    /**
     * The I/O pool cannot take a Lease call (nor an Event: the Events' pool cannot start a thread either): the transport
     * throws an Error ("unable to create native thread").
     */
    TRANSPORT_THROWS_ERROR,
    /** The transport throws a RuntimeException from a Lease call or a watch start. */
    TRANSPORT_THROWS_EXCEPTION,
    /** The callback pool rejects handing user code over (RejectedExecutionException). */
    CALLBACK_POOL_REJECTS
  }

  /**
   * The next {@code count} hand-overs of that kind in this replica's runner throw, inside its loop's task: the
   * runner must stop as {@code ELECTION_FAILED}, its services stopped, its loop left intact. Two in a row strike
   * whoever leads, if one does (the second may then hit the failure's own path).
   */
  record LoopFault(int replica, long at, LoopFaultKind kind, int count) implements Fault {}

  /** Where the quiet tail starts, in milliseconds. */
  long quietFromMillis() {
    return faultPhaseMillis;
  }

  long maxLeaseMillis() {
    return replicas.stream().mapToLong(r -> r.leaseSeconds() * 1000L).max().orElse(0);
  }

  /**
   * The liveness bound after the quiet tail starts (or after a contender's restart in it), derived from the
   * follower's take-over rule (docs/fabric8.md: a Lease that has shown no change is taken once
   * {@code leaseDurationSeconds} have passed on the follower's own monotonic clock since the moment it saw the last
   * change; after a failed call it reads every retry period plus up to 20 % jitter). The worst case is a contender
   * that has not yet seen the Lease (a process restarted just before the tail finds a term it did not write, even
   * under its own identity, and must wait it out from its own first read), and whose calls sent just before the
   * tail were lost to the faults:
   * <ol>
   *   <li>it learns that a call in flight at the tail's start failed only at that call's request timeout;
   *   <li>then it reads again within retryPeriod × 1.2 (its jitter), and sees the Lease when the answer arrives
   *       (2 legs): the moment it saw the last change;
   *   <li>it waits the holder's lease duration (the longest among the replicas: a foreign holder promises that);
   *   <li>then it reads and writes conditionally on what it read (4 legs), and leads.
   * </ol>
   * The timers in steps 1 to 3 run on the contender's monotonic clock, which runs up to its drift slower than true
   * time. Nothing else outlasts the faults: a hung stop or loss handler ends before the tail, a back-off after a
   * failed term is at most a lease duration and reads a Lease that term left free, and the access reviews that the
   * writes wait for answer within 2 × requestTimeout of the start (as simulated), less than steps 1 to 3. A
   * contender that saw the Lease before the tail is due sooner: its lease duration began then.
   */
  long livenessBoundMillis() {
    long maxLeaseMicros = maxLeaseMillis() * 1000;
    long ownClocksMicros = replicas.stream().filter(r -> !r.unelected())
        .mapToLong(r -> ceilDiv((r.requestTimeoutMillis() * 1000 + r.retryPeriodMillis() * 1200 + maxLeaseMicros)
            * 1_000_000L, 1_000_000L + r.driftPpm()))
        .max().orElse(0);
    return ceilDiv(ownClocksMicros, 1000) + 6 * maxLatencyMillis;
  }

  private static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }

  /** The whole run: faults, then the quiet tail long enough to judge liveness. */
  long endMillis() {
    return faultPhaseMillis + livenessBoundMillis() + 2000;
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("SimSchedule{seed=").append(seed).append(", faults for ")
        .append(faultPhaseMillis).append("ms then quiet, latency<=").append(maxLatencyMillis).append("ms\n");
    for (int i = 0; i < replicas.size(); i++) {
      s.append("  replica-").append(i).append(": ").append(replicas.get(i)).append('\n');
    }
    s.append(faults.stream().sorted(java.util.Comparator.comparingLong(Fault::at))
        .map(f -> "  @" + f.at() + "ms " + f).collect(Collectors.joining("\n")));
    return s.append("}").toString();
  }
}
