package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.List;

/**
 * The invariants of one simulated run, checked as it goes (at every simulated instant an event is handled),
 * and the counts they report. Unlike the soak's {@link InvariantChecker}, which reads logs after a real-time
 * run, this one sees the true state of every replica at every instant, including the terms' own validity.
 *
 * <ol>
 *   <li>Never two replicas with reconcilers running (from the first start() call until the stops returned or
 *       the process died), except one that was paused (or whose Lease was deleted under it) meanwhile.
 *   <li>When a replica is elected, every other live replica's last term already reads {@code isValid() ==
 *       false}; and no write passes a replica's gate after another replica's newer term was taken.
 *   <li>Fencing tokens never go negative and strictly increase from term to term within one incarnation of the
 *       Lease. {@code kubectl delete lease} starts a new incarnation, whose count restarts unless a live replica
 *       remembers a higher one (LeaseProtocol keeps the highest it has seen); an operator who sets
 *       leaseTransitions resets the count the same way, and the next term must exceed what was set.
 *   <li>A graceful close of an undisturbed leader whose reconcilers all stopped cleanly releases the Lease, unless
 *       it ended past its renew deadline with a foreign write in the Lease that it had not seen when it closed
 *       (past the deadline only this replica's own write is released).
 *   <li>Liveness: once the faults stop, some replica leads within {@link SimSchedule#livenessBoundMillis()}.
 *   <li>Load: no process sends more than {@link #LOAD_BOUND} Lease calls (reads, writes, watch starts) within any
 *       one retry period of its own clock, and {@link #CALLS_PER_CHANGE} more for each change of the Lease's holder
 *       or term by another replica, each deletion and each write by a client that is no replica, around that window.
 * </ol>
 *
 * <p>Not thread-safe (one thread).
 */
final class SimInvariants {

  /**
   * The most Lease calls a process may send within one retry period (or the shortest lease duration among the
   * replicas, if shorter). The busiest legitimate window seen: a replica starting among contenders whose first
   * start fails (read, watch start, read on the watch's opening, read at expiry, take conflicting, read, take,
   * then a release that conflicts: re-read and release) is 9 calls; one more for slack. A start that always
   * fails without the backoff sends a read, a take and a release every round trip, far more.
   */
  static final int LOAD_BOUND = 10;

  /**
   * The calls a change of the Lease by another client allows beyond {@link #LOAD_BOUND}: the read it prompts and the
   * take it may allow (a take that conflicts did so with another change, which allows its own re-read). Found
   * needed by the generated schedules: two hand-overs within one retry period, a foreign write that made the first
   * take conflict, and a server that was down for the second (eleven calls of a follower, each one a reaction).
   */
  static final int CALLS_PER_CHANGE = 2;

  private final List<String> violations = new ArrayList<>();
  private final List<String> watchFindings = new ArrayList<>();
  int overlaps;
  int validAtOthersElection;
  int staleWrites;
  int tokenRegressions;
  int lostReleases;
  int livenessViolations;
  int loadViolations;
  int lifecycleViolations;
  private int loadExcused;
  int maxRequestsPerRetryPeriod;
  int failovers;
  int elections;
  int exits;
  long writesAccepted;
  long writesRefused;
  long gateClosed;
  // A denied (or failed) preflight whose verdict came while the runner's first read was in flight.
  long deniedWithReadInFlight;
  // A close not expected to release: it ended past its renew deadline with a foreign write in the Lease, unseen.
  long closesLeftToAForeignWrite;
  // A close during a loss expected to release (clean stops, the Lease as the replica left it): checked (h-relloss).
  long releasesAfterLossChecked;

  private boolean overlapping;
  private long incarnation = -1;
  private long lastToken = -1;
  private int lastElected = -1;

  void overlapCount(int running, long nowNanos, String who) {
    if (running >= 2 && !overlapping) {
      overlaps++;
      violation("OVERLAP at " + nowNanos / 1_000_000 + "ms: reconcilers run on " + who);
    }
    overlapping = running >= 2;
  }

  /** A service started again in the same process while its last run's work still runs. */
  void selfOverlap(String detail) {
    overlaps++;
    violation("SELF_OVERLAP: " + detail);
  }

  void elected(int replica) {
    elections++;
    if (lastElected >= 0 && lastElected != replica) {
      failovers++;
    }
    lastElected = replica;
  }

  void validAtElection(String detail) {
    validAtOthersElection++;
    violation("VALID_AT_OTHERS_ELECTION: " + detail);
  }

  void staleWrite(String detail) {
    staleWrites++;
    violation("STALE_WRITE: " + detail);
  }

  /** A replica's write made it holder of a new term with {@code token}, in Lease incarnation {@code uid}. */
  void take(String who, int token, long uid) {
    if (uid != incarnation) {
      incarnation = uid;
      lastToken = -1;
    }
    if (token < 0 || token <= lastToken) {
      tokenRegressions++;
      violation("TOKEN_REGRESSION: " + who + " took token " + token + " after " + lastToken + " (uid " + uid + ")");
    }
    lastToken = Math.max(token, lastToken);
  }

  /** An operator set leaseTransitions: the next term must exceed it. */
  void foreignTransitions(int value) {
    lastToken = value;
  }

  void lostRelease(String detail) {
    lostReleases++;
    violation("LOST_RELEASE: " + detail);
  }

  void liveness(String detail) {
    livenessViolations++;
    violation("LIVENESS: " + detail);
  }

  /**
   * A process sent a Lease call: {@code count} calls are in its window now, and others changed the Lease's holder or
   * term {@code changesByOthers} times around it.
   */
  void requestsInWindow(int count, Iterable<String> calls, int changesByOthers) {
    if (count > maxRequestsPerRetryPeriod) {
      maxRequestsPerRetryPeriod = count;
    }
    int bound = LOAD_BOUND + CALLS_PER_CHANGE * changesByOthers;
    if (count > bound && loadExcused == 0 && loadViolations++ == 0) {
      violation("LOAD: " + count + " Lease calls within one retry period (bound " + LOAD_BOUND + " + "
          + CALLS_PER_CHANGE + " x " + changesByOthers + " changes by others): " + calls);
    }
  }

  /** Invariant 8 (the runner's own): STOPPED with the right cause, with no service left unstopped. */
  void wrongCause(String detail) {
    lifecycle("WRONG_STOP_CAUSE: " + detail);
  }

  void runningAfterStop(String detail) {
    lifecycle("RUNNING_AFTER_STOPPED: " + detail);
  }

  /** Invariant 9: once STOPPED, awaitStopped() returns, no timer of the runner is left, nothing is sent. */
  void awaitStoppedHangs(String detail) {
    lifecycle("AWAIT_STOPPED_HANGS: " + detail);
  }

  void timersLeft(String detail) {
    lifecycle("TIMERS_LEFT: " + detail);
  }

  void requestAfterStop(String detail) {
    lifecycle("REQUEST_AFTER_STOPPED: " + detail);
  }

  /** Invariant 11: an unelected start() returns with every service running, or throws with every one stopped. */
  void unelectedStart(String detail) {
    lifecycle("UNELECTED_START: " + detail);
  }

  /** Invariant 12: the CUSTOM loss handler hears a loss only once every service stopped and the term ended. */
  void lossHandlerEarly(String detail) {
    lifecycle("LOSS_HANDLER_EARLY: " + detail);
  }

  /**
   * Invariant 10: a runner denied by its preflight (or whose preflight failed) sends no Lease write, and no call at
   * all once the verdict came (it reads beside the reviews); one told by its loss handler to stop sends no call.
   */
  void contendedWithoutAccess(String detail) {
    lifecycle("CONTENDED_WHEN_IT_MAY_NOT: " + detail);
  }

  /** Invariant 13: health() reads not live while a stop has outlived stopTimeout and still runs. */
  void liveAfterHungStop(String detail) {
    lifecycle("LIVE_AFTER_HUNG_STOP: " + detail);
  }

  /** Invariant 14: the listener hears the state the runner shows, whatever the listeners before it throw. */
  void listenerMissed(String detail) {
    lifecycle("LISTENER_MISSED_STATE: " + detail);
  }

  /** Invariant 15: a runner that stopped recorded each of its terms as a whole (became leader ... stopped leading). */
  void leadershipEvents(String detail) {
    lifecycle("LEADERSHIP_EVENTS: " + detail);
  }

  /**
   * Invariant 16: at one instant the readers agree: {@code currentTerm()} is the LEADING state's term (the
   * unelected one while not contending, none otherwise), {@code isReady()} and {@code isLive()} are
   * {@code health()}'s, and a term whose {@code awaitEnd} returned is not valid.
   */
  void readersDisagree(String detail) {
    lifecycle("READERS_DISAGREE: " + detail);
  }

  private void lifecycle(String line) {
    lifecycleViolations++;
    violation(line);
  }

  /**
   * While every follower fails to start (a {@code FailingTakeover}), each releases its term at once and the others
   * race for it: a churn the backoff after a failed start ends within a few terms, not a load of the protocol's.
   */
  void excuseLoad(int delta) {
    loadExcused += delta;
  }

  void exited() {
    exits++;
  }

  void gateClosed() {
    gateClosed++;
  }

  void closeLeftToAForeignWrite() {
    closesLeftToAForeignWrite++;
  }

  void releaseAfterLossChecked() {
    releasesAfterLossChecked++;
  }

  void deniedWithReadInFlight() {
    deniedWithReadInFlight++;
  }

  /**
   * What the follower's watch lifecycle did wrong (h-attack4): two watches of one process open at once, a leader
   * that renews with its watch still open. Kept apart from {@link #violations()}; read by {@link #watchFindings()}.
   */
  void watchLifecycle(String line) {
    if (watchFindings.size() < 20) {
      watchFindings.add(line);
    }
  }

  List<String> watchFindings() {
    return List.copyOf(watchFindings);
  }

  private void violation(String line) {
    if (violations.size() < 20) {
      violations.add(line);
    }
  }

  List<String> violations() {
    return List.copyOf(violations);
  }

  boolean passed() {
    return overlaps == 0 && validAtOthersElection == 0 && staleWrites == 0 && tokenRegressions == 0
        && lostReleases == 0 && livenessViolations == 0 && loadViolations == 0 && lifecycleViolations == 0;
  }
}
