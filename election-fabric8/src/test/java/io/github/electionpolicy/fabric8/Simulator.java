package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Action;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * A discrete-event simulation of replicas contending for one Lease: a priority queue of (time, sequence,
 * event), one thread, no sleeps and no wall clock. Events of a replica run only while its process lives (those
 * of a dead process are dropped) and not while it is paused (they wait, in order, for the resume). After every
 * event the invariants that hold at each instant are checked ({@link SimInvariants}).
 *
 * <p>Not thread-safe: one run on one thread.
 */
final class Simulator {

  /** An event; {@code replica} null for the server's and the faults' own events. */
  record Event(long time, long seq, SimReplica replica, int process, Runnable action) {}

  /** The outcome of one run. */
  record Result(SimInvariants invariants, long replicaSteps) {}

  /** A term as the server saw it taken. */
  private record TermKey(String holder, Instant acquireTime, int transitions) {}

  private record WatchConnection(SimReplica replica, int process, int generation, long[] lastDelivery) {}

  /**
   * {@code -Dsim.trace=true} prints a journal of every replica's Lease calls (sent, lost, served, answered), its
   * loop timers, its process starts and ends, its state changes, its leadership Events and its services' stops
   * (with when each returns), each at its simulated time in milliseconds:
   * what to read when a replay fails.
   */
  static final boolean TRACE = Boolean.getBoolean("sim.trace");

  private final PriorityQueue<Event> queue =
      new PriorityQueue<>(Comparator.comparingLong(Event::time).thenComparingLong(Event::seq));
  private final SimSchedule schedule;
  private final SplittableRandom random;
  // The runner's own random choices (preflight verdicts, loss handlers' answers, listeners that throw): a stream of
  // their own, so that adding one changes none of the network's or the protocol's.
  private final SplittableRandom choices;
  // The choices added later (how an exiter ends, a loss handler that closes, a crash through the runner's hook): a
  // stream of their own, so that the schedules found before them replay the same choices as when they were found.
  private final SplittableRandom laterChoices;
  private final SimNetwork network;
  private final SimApiServer server;
  private final SimInvariants invariants = new SimInvariants();
  private final List<SimReplica> replicas = new ArrayList<>();
  private final List<WatchConnection> watches = new ArrayList<>();
  private final Map<TermKey, Long> terms = new HashMap<>();
  // Terms (holder and acquireTime: an operator may have changed leaseTransitions) whose Lease was deleted.
  private final java.util.Set<String> deletedUnder = new java.util.HashSet<>();
  private final long quietFrom;
  private long end;
  private long now;
  private Runnable onNextRelease;
  private long seq;
  private long requestIds;
  private long steps;
  private long latestTerm;
  private boolean livenessMet;
  // Contending processes alive now, and since when one has been alive without a gap (for liveness in the tail).
  private int contendersAlive;
  private long contendersUpSince;
  private int livenessDeferrals;
  // The changes of the Lease's holder or term (takes, releases, deletions, any foreign write) as [sim time, writer's
  // replica index, -1 for another client], for the load invariant's allowance; the last record seen, to tell them.
  private final java.util.ArrayDeque<long[]> termChanges = new java.util.ArrayDeque<>();
  private LeaseRecord lastChange;
  private int writer = -1;

  private Simulator(SimSchedule schedule, SimVariant variant) {
    this.schedule = schedule;
    this.random = new SplittableRandom(schedule.seed());
    this.choices = new SplittableRandom(schedule.seed() ^ 0x5DEECE66DL);
    this.laterChoices = new SplittableRandom(schedule.seed() ^ 0x2545F4914F6CDD1DL);
    this.network = new SimNetwork(random, schedule.maxLatencyMillis() * 1_000_000L, schedule.replicas().size());
    this.server = new SimApiServer(this::leaseChanged);
    this.quietFrom = schedule.quietFromMillis() * 1_000_000L;
    this.end = schedule.endMillis() * 1_000_000L;
    for (int i = 0; i < schedule.replicas().size(); i++) {
      replicas.add(new SimReplica(this, i, schedule.replicas().get(i), variant));
    }
  }

  static Result run(SimSchedule schedule, SimVariant variant) {
    Simulator sim = new Simulator(schedule, variant);
    sim.play();
    return new Result(sim.invariants, sim.steps);
  }

  private void play() {
    for (SimReplica replica : replicas) {
      at(random.nextLong(500_000_000L), replica::startProcess);
    }
    SimFaults.schedule(this, schedule);
    at(choices.nextLong(100_000_000L), this::probe);
    at(quietFrom, this::checkLiveness);
    at(quietFrom + schedule.livenessBoundMillis() * 1_000_000L, this::livenessDeadline);
    while (!queue.isEmpty()) {
      Event event = queue.poll();
      if (event.time() > end) {
        break;
      }
      now = event.time();
      dispatch(event);
    }
  }

  /** Reads every replica's state() and health() at a random moment, about every 100 ms. */
  private void probe() {
    for (SimReplica r : replicas) {
      r.probe();
    }
    at(now + 50_000_000L + choices.nextLong(100_000_000L), this::probe);
  }

  void dispatch(Event event) {
    SimReplica replica = event.replica();
    if (replica != null) {
      if (!replica.alive || replica.process != event.process()) {
        return;
      }
      if (replica.paused) {
        replica.deferred.add(event);
        return;
      }
    }
    event.action().run();
    if (replica != null) {
      steps++;
    }
    checkOverlap();
    if (!livenessMet && now >= quietFrom) {
      checkLiveness();
    }
  }

  private void checkOverlap() {
    int running = 0;
    StringBuilder who = null;
    for (SimReplica r : replicas) {
      if (r.alive && !r.paused && !r.spec.unelected() && r.servicesRunning() && !excused(r)) {
        running++;
        who = who == null ? new StringBuilder(r.identity) : who.append(", ").append(r.identity);
      }
    }
    invariants.overlapCount(running, now, who == null ? "" : who.toString());
  }

  /** Paused while its reconcilers ran, or its Lease deleted under its term: see {@link #leaseDeleted}. */
  private boolean excused(SimReplica r) {
    return r.pauseExcused || r.runningTerm != null && deletedUnder(r.runningTerm);
  }

  /**
   * {@code kubectl delete lease} under a held term: a replica that never saw a holder may create the Lease at
   * once, before the holder learns of the deletion at its next renewal. The operator broke exclusion, not the
   * protocol, so every term taken so far is excused from invariants 1 and 2 until its reconcilers stopped: the
   * one the Lease names, one whose answer is still on the way, one a foreign writer took the Lease from before
   * it renewed again, one whose reconcilers are still stopping. Terms taken after the deletion are not.
   */
  void leaseDeleted() {
    for (TermKey term : terms.keySet()) {
      deletedUnder.add(term.holder() + "@" + term.acquireTime());
    }
  }

  private boolean deletedUnder(LeadershipTerm term) {
    return deletedUnder.contains(term.holderIdentity() + "@" + term.acquireTime());
  }

  /** Whether the Lease names this term now. */
  boolean leaseNames(LeadershipTerm term) {
    LeaseRecord lease = server.current();
    return lease != null && lease.heldBy(term.holderIdentity()) && lease.transitions() == term.leaseTransitions()
        && term.acquireTime().equals(lease.acquireTime());
  }

  /**
   * Liveness is judged from the quiet tail, or from when a contending process is up again in it, whichever is
   * later: a process that a fault just before the tail made exit (its loss policy) restarts only after its restart
   * delay, and when it was the only contender nobody can lead meanwhile.
   */
  private void livenessDeadline() {
    if (livenessMet) {
      return;
    }
    long bound = schedule.livenessBoundMillis() * 1_000_000L;
    long due = contendersAlive == 0 ? now + bound : Math.max(quietFrom, contendersUpSince) + bound;
    if (due > now && livenessDeferrals++ < 10) {
      end = Math.max(end, due + 2_000_000_000L);
      at(due, this::livenessDeadline);
      return;
    }
    invariants.liveness("no replica led within " + schedule.livenessBoundMillis() + "ms of the quiet tail"
        + (livenessDeferrals > 0 ? " (or of a contender's restart in it)" : ""));
    livenessMet = true;
  }

  /** A replica's process started: counted for liveness if it contends. */
  void processStarted(SimReplica replica) {
    trace(() -> replica.identity + "/p" + replica.process + " process started");
    if (!replica.spec.unelected() && contendersAlive++ == 0) {
      contendersUpSince = now;
    }
  }

  /** A replica's process ended (crash, exit, or after its runner stopped). */
  void processDied(SimReplica replica) {
    trace(() -> replica.identity + "/p" + replica.process + " process died");
    if (!replica.spec.unelected()) {
      contendersAlive--;
    }
  }

  private void checkLiveness() {
    for (SimReplica r : replicas) {
      if (r.alive && !r.paused && r.startedTerm != null && r.startedTerm.isValid()) {
        livenessMet = true;
        return;
      }
    }
  }

  /** One line of the journal ({@link #TRACE}), built only when it is on. */
  void trace(java.util.function.Supplier<String> what) {
    if (TRACE) {
      System.out.printf("TRACE %10.3f %s%n", now / 1e6, what.get());
    }
  }

  // ---- scheduling -----------------------------------------------------------------------------------------

  long now() {
    return now;
  }

  /** Runs {@code hook} once, when the server next applies a release. */
  void onNextRelease(Runnable hook) {
    onNextRelease = hook;
  }

  SplittableRandom random() {
    return random;
  }

  /** A replica process's own stream of the runner's random choices. */
  SplittableRandom choices() {
    return new SplittableRandom(choices.nextLong());
  }

  /** A replica process's stream of the choices added later (see {@link #laterChoices}). */
  SplittableRandom laterChoices() {
    return new SplittableRandom(laterChoices.nextLong());
  }

  SimNetwork network() {
    return network;
  }

  SimApiServer server() {
    return server;
  }

  SimInvariants invariants() {
    return invariants;
  }

  List<SimReplica> replicas() {
    return replicas;
  }

  long minLeaseMillis() {
    return schedule.replicas().stream().mapToLong(r -> r.leaseSeconds() * 1000L).min().orElse(0);
  }

  /**
   * How many times since {@code sinceNanos} (simulated time) a client other than replica {@code index} changed the
   * Lease's holder or term, or wrote it at all if it is no replica, or deleted it: each prompts a follower's read and
   * may allow a take (the load invariant's allowance).
   */
  int termChangesByOthers(int index, long sinceNanos) {
    int n = 0;
    for (long[] change : termChanges) {
      if (change[0] - sinceNanos >= 0 && change[1] != index) {
        n++;
      }
    }
    return n;
  }

  long maxLeaseMillis() {
    return schedule.maxLeaseMillis();
  }

  long quietFromNanos() {
    return quietFrom;
  }

  /** A server or fault event. */
  void at(long time, Runnable action) {
    queue.add(new Event(Math.max(time, now), seq++, null, 0, action));
  }

  /** An event of the replica's current process. */
  void at(long time, SimReplica replica, Runnable action) {
    queue.add(new Event(Math.max(time, now), seq++, replica, replica.process, action));
  }

  long nextRequestId() {
    return ++requestIds;
  }

  long restartDelay() {
    return 500_000_000L + random.nextLong(4_500_000_000L);
  }

  /** Starts a fresh process after {@code delayNanos}; during the faults, never later than the quiet tail. */
  void restartLater(SimReplica replica, long delayNanos) {
    long t = now + delayNanos;
    if (now < quietFrom) {
      t = Math.min(t, quietFrom);
    }
    at(t, () -> {
      if (!replica.alive) {
        replica.startProcess();
      }
    });
  }

  // ---- the API server over the network -----------------------------------------------------------------

  void request(SimReplica replica, Action action, Consumer<Answer> answered) {
    int process = replica.process;
    long up = network.up(replica.index);
    java.util.function.Supplier<String> name =
        () -> replica.identity + "/p" + process + " " + action.getClass().getSimpleName();
    trace(() -> name.get() + " sent" + (up < 0 ? " (lost)" : ""));
    if (up < 0) {
      return;
    }
    at(now + up, () -> {
      Answer answer = serve(replica, action);
      trace(() -> name.get() + " served: " + answer);
      long down = network.down(replica.index);
      if (down >= 0) {
        queue.add(new Event(now + down, seq++, replica, process, () -> {
          trace(() -> name.get() + " answered");
          answered.accept(answer);
        }));
      }
    });
  }

  private Answer serve(SimReplica replica, Action action) {
    if (network.serverDown()) {
      return new Answer.Failed(FailureKind.OTHER, "503 ServiceUnavailable");
    }
    if (action instanceof LeaseStep.Read) {
      return server.get();
    }
    LeaseRecord before = server.current();
    writer = replica.index;
    Answer answer;
    try {
      answer = action instanceof LeaseStep.Create create ? server.create(create.record())
          : server.update(((LeaseStep.Update) action).record());
    } finally {
      writer = -1;
    }
    if (answer instanceof Answer.Written written) {
      LeaseRecord after = written.record();
      if (after.holder() == null && before != null && before.heldBy(replica.identity)) {
        replica.released = true;
        Runnable hook = onNextRelease;
        onNextRelease = null;
        if (hook != null) {
          hook.run();
        }
      }
      boolean renewal = before != null && before.heldBy(replica.identity) && before.sameTerm(after);
      if (after.heldBy(replica.identity) && !renewal) {
        terms.put(key(after.holder(), after.acquireTime(), after.transitions()), ++latestTerm);
        invariants.take(replica.identity, after.transitions(), server.incarnation());
      }
    }
    return answer;
  }

  private static TermKey key(String holder, Instant acquireTime, int transitions) {
    return new TermKey(holder, acquireTime, transitions);
  }

  private static TermKey key(LeadershipTerm term) {
    return key(term.holderIdentity(), term.acquireTime(), term.leaseTransitions());
  }

  /**
   * A replica was elected: invariant 2 on every other live replica's last term taken before this one at the
   * server (an answer held up by a pause may elect a term long superseded: it is born invalid and starts nothing).
   */
  void elected(SimReplica replica, LeadershipTerm term) {
    invariants.elected(replica.index);
    Long mine = terms.get(key(term));
    for (SimReplica other : replicas) {
      if (other == replica || !other.alive || other.lastTerm == null) {
        continue;
      }
      Long theirs = terms.get(key(other.lastTerm));
      boolean earlier = mine == null || theirs == null || theirs < mine;
      if (earlier && !deletedUnder(other.lastTerm) && other.lastTerm.isValid()) {
        invariants.validAtElection(other.identity + "'s term " + other.lastTerm.leaseTransitions()
            + " still valid when " + replica.identity + " was elected with " + term.leaseTransitions() + " at "
            + now / 1_000_000 + "ms");
      }
    }
  }

  /**
   * A write through the replica's gate. Sent after another replica's newer term was taken, the gate failed (a
   * violation); the server refuses any write whose term is not the one the Lease names now (fencing).
   */
  void dataWrite(SimReplica replica, LeadershipTerm term) {
    Long mine = terms.get(key(term));
    if ((mine == null || mine != latestTerm) && !deletedUnder(term)) {
      invariants.staleWrite(replica.identity + " wrote with term " + term.leaseTransitions() + " at "
          + now / 1_000_000 + "ms after a newer term was taken");
    }
    long up = network.up(replica.index);
    if (up < 0) {
      return;
    }
    at(now + up, () -> {
      if (network.serverDown() || !leaseNames(term)) {
        invariants.writesRefused++;
      } else {
        invariants.writesAccepted++;
      }
    });
  }

  // ---- watches ----------------------------------------------------------------------------------------------

  void openWatch(SimReplica replica, int generation) {
    int process = replica.process;
    long up = network.up(replica.index);
    long failAt = now + replica.requestTimeoutNanos;
    if (up < 0) {
      queue.add(new Event(failAt, seq++, replica, process, () -> replica.watchFailedToStart(generation)));
      return;
    }
    at(now + up, () -> {
      long down = network.down(replica.index);
      if (network.serverDown() || down < 0 || replica.process != process || !replica.alive) {
        queue.add(new Event(Math.max(now, failAt), seq++, replica, process,
            () -> replica.watchFailedToStart(generation)));
        return;
      }
      long[] last = {now + down};
      watches.add(new WatchConnection(replica, process, generation, last));
      queue.add(new Event(now + down, seq++, replica, process, () -> replica.watchOpened(generation)));
    });
  }

  void cancelWatch(SimReplica replica) {
    watches.removeIf(w -> w.replica() == replica);
  }

  /** Ends the watches of {@code replica} (all when null): the client notices after its request timeout. */
  void breakWatches(SimReplica replica, boolean gone) {
    for (WatchConnection w : List.copyOf(watches)) {
      if (replica == null || w.replica() == replica) {
        watches.remove(w);
        long down = network.down(w.replica().index);
        long notice = gone && down >= 0 ? down : w.replica().requestTimeoutNanos;
        queue.add(new Event(Math.max(now + notice, w.lastDelivery()[0]), seq++, w.replica(), w.process(),
            () -> w.replica().watchClosed(w.generation())));
      }
    }
  }

  private void leaseChanged(LeaseRecord record) {
    boolean termChanged = writer < 0 || record == null || lastChange == null || !record.sameTerm(lastChange)
        || !java.util.Objects.equals(record.holder(), lastChange.holder());
    lastChange = record;
    if (termChanged) {
      termChanges.addLast(new long[] {now, writer});
      long keep = 2 * maxLeaseMillis() * 1_000_000L;
      while (now - termChanges.peekFirst()[0] > keep) {
        termChanges.pollFirst();
      }
    }
    for (WatchConnection w : watches) {
      if (network.dropEvent()) {
        continue;
      }
      long down = network.down(w.replica().index);
      if (down < 0) {
        continue;
      }
      long t = Math.max(w.lastDelivery()[0], now + down + network.eventDelay());
      w.lastDelivery()[0] = t;
      queue.add(new Event(t, seq++, w.replica(), w.process(), () -> w.replica().watchEvent(w.generation(), record)));
    }
  }
}
