package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Action;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.SimSchedule.ReplicaSpec;
import io.github.electionpolicy.fabric8.SimSchedule.Trouble;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * One simulated replica: a process (restarted fresh after a crash, an exit or a close) that runs the real
 * {@link ElectionRunner}, with its real {@link RunnerLifecycle}, {@link LifecycleDriver}, {@link LeaseElector},
 * {@link LeaseProtocol}, {@link CallbackLane}s, {@link ServiceSequence} and {@link LeadershipTerm}s, through the
 * runner's seams, all on the simulator's one thread in simulated time:
 * <ul>
 *   <li>its {@link RunnerLoop} runs each task as an event of this process, and each timer at the true time at
 *       which the process's own drifting monotonic clock reaches it;
 *   <li>its executor for user code runs each callback lane as an event of this process; a service's
 *       {@code stop()} returns at once but says how long it took, and whatever the lane hands back to the loop
 *       after it arrives that much later (a hung stop's answer arrives after the end of the run);
 *   <li>its {@link LeaseTransport} sends each call over the simulated network to the simulated API server,
 *       and opens watches there;
 *   <li>its ticker and wall clock are the process's {@link SimClock}.
 * </ul>
 * A dead process's events are dropped, a paused one's wait for the resume: that is all a crash and a stop-the-
 * world pause are. While its services run, the replica writes through the real {@link WriteGateInterceptor}
 * every half retry period.
 *
 * <p>Not thread-safe (one thread).
 */
final class SimReplica {

  static final String NAMESPACE = "sim";
  static final String LEASE = "sim-lease";

  final int index;
  final String identity;
  final ReplicaSpec spec;
  final long leaseNanos;
  final long retryNanos;
  final long requestTimeoutNanos;
  final long stopTimeoutNanos;
  private final long loadWindowNanos;
  private final Simulator sim;
  final SimVariant variant;
  final int[] troubles = new int[Trouble.values().length];

  // The process. `process` numbers incarnations: events of a dead one are dropped.
  int process;
  boolean alive;
  boolean paused;
  List<Simulator.Event> deferred = new ArrayList<>();
  SimClock clock;
  ElectionRunner runner;
  private Transport transport;
  private final List<Service> services = new ArrayList<>();
  /** The leadership Events this replica's runners recorded, in order (the simulated server keeps no Events). */
  final List<RecordedEvent> leadershipEvents = new ArrayList<>();

  /** A leadership Event and the process (of this replica) that recorded it. */
  record RecordedEvent(int process, LeadershipEvent event) {}
  private final ArrayDeque<Long> sends = new ArrayDeque<>();
  private final ArrayDeque<String> sent = new ArrayDeque<>();
  // Simulated time spent so far in the callback that runs now; hand-backs to the loop arrive that much later.
  private long spent;
  private boolean inCallback;
  private int pendingTimers;
  private boolean stopped;

  // What the invariants read.
  /** The last term this process's runner published as LEADING (invariant 2 looks at it). */
  LeadershipTerm lastTerm;
  /** The term every service started under, while they run (liveness). */
  LeadershipTerm startedTerm;
  /** The term the services were started under, until they all stopped (excuses after a Lease deletion). */
  LeadershipTerm runningTerm;
  /** Paused while its services ran: an overlap until they stopped is the pause's (fencing guards it). */
  boolean pauseExcused;
  /** Whether this process's runner released the Lease (the server saw it write an empty holder). */
  boolean released;

  // The runner's own failures (LoopFault): how many hand-overs still throw, and whether one did.
  private int transportThrows;
  private boolean transportThrowsError;
  private int poolRejects;
  private boolean loopFaultHit;
  // The RBAC preflight's verdict for this process, as the simulated server's access reviews give it.
  enum Verdict { GRANTED, DENIED, FAILS, SKIPPED }
  private Verdict verdict;
  private LeaseAccessDeniedException denial;
  // A stop threw or hung in this process: a loss may end contention for good.
  private boolean uncleanEver;
  // A service's start threw in this process (an unelected start then fails).
  private boolean startThrewEver;
  // The loss handler answered STOP, threw or returned null: the runner must contend no more.
  private boolean lossAnsweredStop;
  // A closing runner released the Lease (a read back, then a write of no holder) after its handler's STOP: allowed only
  // as the release of a close that answered the loss first, so the runner must stop CLOSED (h-relloss).
  private boolean releasedAfterStopAnswer;
  // A service's start threw a VirtualMachineError in this process: the runner may not contend again after a loss.
  private boolean fatalEver;
  // The loss policy's exiter was called in this process (it may throw or return, then the runner stops as LOST).
  private boolean exiterCalled;
  // The runner's crash hook runs: a killed process sends nothing and records nothing.
  private boolean crashing;
  // An Event of this process could not be handed to a thread (the Error of a LoopFault): its Events have a gap.
  private boolean eventRefused;
  private boolean throwingListener;
  /** The last state the replica's listener heard, and since when the runner's own state differs from it. */
  private ElectionState heard;
  private long mismatchSince = -1;
  // The stop run on the services' lane: when it began and when its hand-back reaches the loop.
  private long stopRunStart = -1;
  private long stopRunEnd = -1;
  // An unelected start runs inline (start() waits for it, and the simulation has one thread): tasks queue here.
  private ArrayDeque<Runnable> inline;
  private boolean inlineDraining;
  private SplittableRandom choices;
  private SplittableRandom laterChoices;

  // close() as a fault.
  private boolean closing;
  private boolean closeArmed;
  private long closeArmedRestartNanos;
  private long restartAfterCloseNanos;
  private boolean closeExpectsRelease;
  // Closed during a loss (its term ended, no request sent since to contend again), the Lease still naming the lost
  // term as this replica wrote it (no foreign write), undisturbed: expected to release if its stops were clean and
  // nobody wrote the Lease since this resourceVersion (h-relloss). Null: not expected.
  private String closeAfterLossVersion;
  // A Lease request sent, not closing, after the last term ended: the runner contends again after its loss.
  private boolean contendedSinceLoss;
  private boolean closeAtRenewalArmed;
  private long closeAtRenewalRestartNanos;
  boolean closeDisturbed;
  // The highest resourceVersion that an answer taken by this process showed; the term it closed as leader; and a
  // write of another client's that the Lease held at the close, unseen by this process (-1: none).
  private long seenVersion;
  private LeadershipTerm closeTerm;
  private long unseenForeignAtClose;

  SimReplica(Simulator sim, int index, ReplicaSpec spec, SimVariant variant) {
    this.sim = sim;
    this.index = index;
    this.identity = "replica-" + index;
    this.spec = spec;
    this.variant = variant;
    this.leaseNanos = spec.leaseNanos();
    this.retryNanos = spec.retryPeriodMillis() * 1_000_000L;
    this.requestTimeoutNanos = spec.requestTimeoutMillis() * 1_000_000L;
    this.stopTimeoutNanos = spec.stopTimeoutMillis() * 1_000_000L;
    this.loadWindowNanos = Math.min(retryNanos, sim.minLeaseMillis() * 1_000_000L);
  }

  // ---- the process ---------------------------------------------------------------------------------------

  void startProcess() {
    process++;
    alive = true;
    sim.processStarted(this);
    paused = false;
    deferred = new ArrayList<>();
    long origin = spec.originNearWrap() ? Long.MAX_VALUE - sim.random().nextLong(60_000_000_000L)
        : sim.random().nextLong();
    clock = new SimClock(sim.now(), origin, spec.driftPpm(), spec.wallOffsetMillis() * 1_000_000L);
    transport = new Transport(process);
    services.clear();
    sends.clear();
    sent.clear();
    spent = 0;
    inCallback = false;
    pendingTimers = 0;
    stopped = false;
    lastTerm = null;
    startedTerm = null;
    runningTerm = null;
    pauseExcused = false;
    released = false;
    closing = false;
    closeArmed = false;
    closeExpectsRelease = false;
    closeAfterLossVersion = null;
    contendedSinceLoss = false;
    closeAtRenewalArmed = false;
    closeDisturbed = false;
    seenVersion = -1;
    closeTerm = null;
    unseenForeignAtClose = -1;
    transportThrows = 0;
    poolRejects = 0;
    loopFaultHit = false;
    uncleanEver = false;
    startThrewEver = false;
    lossAnsweredStop = false;
    releasedAfterStopAnswer = false;
    fatalEver = false;
    exiterCalled = false;
    crashing = false;
    eventRefused = false;
    // The state a runner starts in is not an event: the listener hears what comes after it.
    heard = spec.unelected() ? new ElectionState.NotContending(identity) : new ElectionState.Starting();
    mismatchSince = -1;
    stopRunStart = -1;
    stopRunEnd = -1;
    runner = null;
    choices = sim.choices();
    laterChoices = sim.laterChoices();
    // The access reviews' verdict: denied or failing only while faults happen (a denied process exits and restarts).
    boolean faulty = sim.now() < sim.quietFromNanos();
    int v = choices.nextInt(100);
    verdict = spec.unelected() ? Verdict.SKIPPED : faulty && v < 4 ? Verdict.DENIED : faulty && v < 7 ? Verdict.FAILS
        : v < 15 ? Verdict.SKIPPED : Verdict.GRANTED;
    denial = verdict == Verdict.DENIED ? new LeaseAccessDeniedException(NAMESPACE, LEASE, List.of("update")) : null;
    throwingListener = choices.nextInt(3) == 0;
    ElectionRunner.Builder builder = ElectionRunner.builder()
        .decide(io.github.electionpolicy.ElectionPolicy.defaults(), io.github.electionpolicy.Environment.of(
            spec.unelected() ? Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "LEADER_ELECTION_ENABLED", "false")
                : Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1")),
            io.github.electionpolicy.Substrate.usingKubernetesApi("kubernetes"))
        .settings(settings())
        .loop(new Loop(process))
        .userCode(new UserCode(process))
        .ticker(ticker())
        .clock(wallClock())
        .flaw(variant.flaw)
        .runnerFlaw(variant.runnerFlaw)
        .readiness(spec.readiness())
        .rbacPreflight(verdict != Verdict.SKIPPED);
    if (!spec.unelected()) {
      builder.transport(transport);
    }
    if (throwingListener) {
      builder.listener(new Thrower());
    }
    builder.listener(new Watcher());
    for (int i = 0; i < spec.reconcilers(); i++) {
      Service service = new Service(i);
      services.add(service);
      builder.service(service);
    }
    if (spec.unelected()) {
      startUnelected(builder);
    } else {
      runner = builder.start();
    }
  }

  /**
   * An unelected start: {@code start()} waits until the services started, so its loop tasks and callbacks run
   * inline, in order, on this one thread (timers stay events). It returns with every service running, or throws
   * the start's failure once every service that started has been stopped.
   */
  private void startUnelected(ElectionRunner.Builder builder) {
    int p = process;
    inline = new ArrayDeque<>();
    try {
      runner = builder.start();
    } catch (IllegalStateException failed) {
      inline = null;
      for (Service service : services) {
        if (service.started && !service.stopCalled) {
          sim.invariants().unelectedStart(identity + "'s unelected start() threw (" + failed.getMessage()
              + ") while its service " + service.index + " still runs");
        }
      }
      die(sim.restartDelay()); // the process's main fails
      return;
    } finally {
      inline = null;
    }
    if (process != p || closing) {
      return;
    }
    ElectionState state = runner.state();
    for (Service service : services) {
      if (!service.started || service.stopCalled) {
        sim.invariants().unelectedStart(identity + "'s unelected start() returned, yet its service "
            + service.index + " does not run (" + state + ")");
      }
    }
    if (!(state instanceof ElectionState.NotContending) || runner.currentTerm().isEmpty()) {
      sim.invariants().unelectedStart(identity + "'s unelected start() returned in " + state);
    }
  }

  /** Arms a failure inside the runner's loop task: the next {@code count} hand-overs of that kind throw. */
  void loopFault(SimSchedule.LoopFaultKind kind, int count) {
    if (!alive) {
      return;
    }
    if (kind == SimSchedule.LoopFaultKind.CALLBACK_POOL_REJECTS) {
      poolRejects = count;
    } else {
      transportThrows = count;
      transportThrowsError = kind == SimSchedule.LoopFaultKind.TRANSPORT_THROWS_ERROR;
    }
  }

  private void loopFaultHits() {
    loopFaultHit = true;
    closeDisturbed = true;
  }

  private void runInline(Runnable task) {
    inline.add(task);
    if (inlineDraining) {
      return;
    }
    inlineDraining = true;
    try {
      Runnable next;
      while (inline != null && (next = inline.poll()) != null) {
        next.run();
      }
    } finally {
      inlineDraining = false;
    }
  }

  private LeaseSettings settings() {
    LossPolicy policy = spec.lossPolicy() == LossPolicy.Kind.EXIT ? LossPolicy.exit(status -> exited())
        : spec.lossPolicy() == LossPolicy.Kind.CUSTOM ? LossPolicy.custom(this::onLoss) : LossPolicy.recontend();
    return LeaseSettings.builder()
        .leaseName(LEASE)
        .namespace(NAMESPACE)
        .identity(identity)
        .leaseDuration(Duration.ofNanos(leaseNanos))
        .renewDeadline(Duration.ofMillis(spec.renewDeadlineMillis()))
        .retryPeriod(Duration.ofMillis(spec.retryPeriodMillis()))
        .requestTimeout(Duration.ofMillis(spec.requestTimeoutMillis()))
        .stopTimeout(Duration.ofNanos(stopTimeoutNanos))
        .lossPolicy(policy)
        .build();
  }

  /**
   * The CUSTOM loss handler: checks that it hears the loss only once every service's stop() returned, for a term
   * that has ended; then (from the seed) answers RECONTEND or STOP, throws, returns null, hangs for a while
   * first, or closes the runner from inside.
   */
  private LossHandler.AfterLoss onLoss(LeadershipTerm term) {
    callbackEntered();
    for (Service service : services) {
      if (service.started && !service.stopCalled) {
        sim.invariants().lossHandlerEarly(identity + "'s loss handler ran while its service " + service.index
            + " had not been stopped");
      }
    }
    if (term.isValid()) {
      sim.invariants().lossHandlerEarly(identity + "'s loss handler heard of a term that is still valid");
    }
    if (laterChoices.nextInt(8) == 0) {
      close(sim.restartDelay()); // closed from inside the handler (its answer then no longer counts)
    }
    int pick = choices.nextInt(20);
    long beforeQuiet = sim.quietFromNanos() - sim.now() - 1;
    if (pick >= 17 && beforeQuiet > 0) {
      spent += Math.min(beforeQuiet, 1 + choices.nextLong(4 * stopTimeoutNanos)); // hangs, then answers
      pick = choices.nextInt(17);
    }
    if (pick < 10) {
      return LossHandler.AfterLoss.RECONTEND;
    }
    lossAnsweredStop = true;
    if (pick < 13) {
      return LossHandler.AfterLoss.STOP;
    }
    if (pick < 16) {
      throw new IllegalStateException("simulated loss handler failure");
    }
    return null;
  }

  /**
   * The exiter. Mostly the process ends at once, its Lease left to expire (System.exit). Else, from the seed: the
   * exit runs a shutdown hook that closes the runner (from the exiter's own thread here, so close() returns at
   * once, and the process ends once the runner stopped); or the exiter throws (a SecurityException from
   * System.exit) or returns without exiting: then the runner must stop as LOST all the same, and the process ends
   * as its main would, once it sees STOPPED.
   */
  private void exited() {
    callbackEntered();
    sim.invariants().exited();
    exiterCalled = true;
    int pick = laterChoices.nextInt(8);
    if (pick >= 3) {
      die(sim.restartDelay());
      return;
    }
    if (pick == 2) {
      close(sim.restartDelay());
      return;
    }
    int p = process;
    sim.at(handBackTime() + stopTimeoutNanos + 1_000_000L, this, () -> {
      if (process == p && !stopped) {
        sim.invariants().awaitStoppedHangs(identity + "'s exiter returned" + (pick == 0 ? " (threw)" : "")
            + " but its runner is still " + runner.state());
      }
    });
    if (pick == 0) {
      throw new SecurityException("simulated: exit not permitted");
    }
  }

  /**
   * A crash fault: every other time through the runner's own crash hook first (as the tests kill a replica), which
   * must end it as a killed process ends to the others: it sends nothing more, records no Event.
   */
  void crash(long restartAfterNanos) {
    if (alive && !paused && runner != null && !stopped && laterChoices.nextBoolean()) {
      crashing = true;
      inline = new ArrayDeque<>(); // the hook waits for its loop task: run it at once, on this one thread
      try {
        RunnerHooks.crash(runner);
      } finally {
        inline = null;
        crashing = false;
      }
    }
    die(restartAfterNanos);
  }

  /** The process is gone (crash, exit, or the end after close): nothing of it runs any more. */
  void die(long restartAfterNanos) {
    if (!alive) {
      return;
    }
    alive = false;
    sim.processDied(this);
    paused = false;
    deferred = new ArrayList<>();
    services.clear();
    pauseExcused = false;
    startedTerm = null;
    runningTerm = null;
    sim.cancelWatch(this);
    process++;
    sim.restartLater(this, restartAfterNanos);
  }

  void pause(long forNanos) {
    if (!alive || paused) {
      return;
    }
    paused = true;
    if (servicesRunning()) {
      pauseExcused = true;
    }
    int p = process;
    sim.at(sim.now() + forNanos, () -> resume(p));
  }

  /** The worst case: the services act first, then the election logic catches up, oldest event first. */
  private void resume(int p) {
    if (!alive || process != p) {
      return;
    }
    paused = false;
    if (startedTerm != null && servicesRunning()) {
      gateWrite(startedTerm);
    }
    List<Simulator.Event> held = deferred;
    deferred = new ArrayList<>();
    for (Simulator.Event event : held) {
      sim.dispatch(event);
    }
  }

  Ticker ticker() {
    SimClock mine = clock;
    return () -> mine.mono(sim.now());
  }

  private Clock wallClock() {
    SimClock mine = clock;
    return new Clock() {
      @Override
      public ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        return mine.wall(sim.now());
      }
    };
  }

  long monoNow() {
    return clock.mono(sim.now());
  }

  /** When something handed back from the current callback arrives: after the time the callback took. */
  private long handBackTime() {
    return sim.now() + (inCallback ? spent : 0);
  }

  // ---- what the invariants read --------------------------------------------------------------------------

  /** From the first start() until every stop() returned (or the process died): invariant 1's "running". */
  boolean servicesRunning() {
    for (Service service : services) {
      if (service.running()) {
        return true;
      }
    }
    pauseExcused = false;
    runningTerm = null;
    if (startedTerm != null && !startedTerm.isValid()) {
      startedTerm = null;
    }
    return false;
  }

  /** Timers of the loop that are scheduled and not cancelled: none may be left once the runner stopped. */
  int pendingTimers() {
    return pendingTimers;
  }

  boolean stopped() {
    return stopped;
  }

  // ---- close as a fault ------------------------------------------------------------------------------------

  void armCloseFromCallback(long restartAfterNanos) {
    closeArmed = true;
    closeArmedRestartNanos = restartAfterNanos;
  }

  void disarm() {
    closeArmed = false;
    closeAtRenewalArmed = false;
  }

  /** The next renewal this process sends loses its answer, and the process is closed as it goes out. */
  void armCloseAtNextRenewal(long restartAfterNanos) {
    closeAtRenewalArmed = true;
    closeAtRenewalRestartNanos = restartAfterNanos;
  }

  /** A callback of the runner (a service, a listener, the loss handler) begins: a close armed for it happens. */
  private void callbackEntered() {
    if (closeArmed && runner != null) {
      closeArmed = false;
      close(closeArmedRestartNanos);
    }
  }

  void close(long restartAfterNanos) {
    if (closing || !alive || stopped) {
      return;
    }
    closing = true;
    restartAfterCloseNanos = restartAfterNanos;
    ElectionState state = runner.state();
    LeadershipTerm term = state instanceof ElectionState.Leading leading ? leading.term() : null;
    // Expected to release: a valid leader whose term the Lease still names, with no fault in its way.
    closeExpectsRelease = term != null && term.isValid() && sim.leaseNames(term) && !paused
        && !sim.network().disturbs(index) && !troubled();
    closeTerm = term;
    LeaseRecord lease = sim.server().current();
    boolean inLoss = term == null && lastTerm != null && !lastTerm.isValid() && !contendedSinceLoss;
    closeAfterLossVersion = inLoss && sim.leaseNames(lastTerm) && sim.server().foreignVersion() < 0 && !paused
        && !sim.network().disturbs(index) && !troubled() ? lease.resourceVersion() : null;
    long foreign = sim.server().foreignVersion();
    unseenForeignAtClose = foreign > seenVersion ? foreign : -1;
    closeDisturbed = false;
    released = false;
    if (inCallback) {
      runner.close(); // from inside a callback it returns at once; the runner finishes once the callback returned
      try {
        runner.awaitStopped(); // returns at once inside a callback, as does the timed form
        if (runner.awaitStopped(Duration.ZERO) != (runner.state().kind() == ElectionState.Kind.STOPPED)) {
          sim.invariants().awaitStoppedHangs(identity + "'s awaitStopped(0) in a callback disagrees with its state");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    } else {
      RunnerHooks.closeAsync(runner); // close() from another thread: the simulation's one thread cannot wait for it
    }
  }

  private boolean troubled() {
    for (int count : troubles) {
      if (count > 0) {
        return true;
      }
    }
    return false;
  }

  /**
   * The leadership Events of process {@code p}, which stopped (it did not crash): each term it won is one {@code
   * became leader}, then a {@code lost} if it was lost, then one {@code stopped leading}, all with its fencing
   * token, the tokens growing from term to term, and no term left open.
   */
  private void checkLeadershipEvents(int p) {
    if (eventRefused) {
      return; // an Event the pool could not take is lost, as one the full pool drops: Events are best effort
    }
    Integer open = null;
    boolean lost = false;
    int last = Integer.MIN_VALUE;
    for (RecordedEvent recorded : leadershipEvents) {
      if (recorded.process() != p) {
        continue;
      }
      LeadershipEvent event = recorded.event();
      String where = identity + "'s Event \"" + event.message() + "\" ";
      switch (event.kind()) {
        case BECAME_LEADER -> {
          if (open != null) {
            sim.invariants().leadershipEvents(where + "while the term " + open + " is still open");
          } else if (event.fencingToken() <= last) {
            sim.invariants().leadershipEvents(where + "after a term with token " + last);
          }
          open = event.fencingToken();
          last = event.fencingToken();
          lost = false;
        }
        case LOST, STOPPED_LEADING -> {
          if (open == null || open != event.fencingToken() || lost && event.kind() == LeadershipEvent.Kind.LOST) {
            sim.invariants().leadershipEvents(where + "without the term open (open: " + open + ")");
          }
          if (event.kind() == LeadershipEvent.Kind.LOST) {
            lost = true;
          } else {
            open = null;
          }
        }
      }
    }
    if (open != null) {
      sim.invariants().leadershipEvents(identity + " stopped with the term " + open + " open in its Events");
    }
  }

  /** The runner published STOPPED: check what must hold then, and end the process as its main would. */
  private void runnerStopped(ElectionState.Stopped state) {
    stopped = true;
    String wrong = wrongCause(state);
    if (wrong != null) {
      sim.invariants().wrongCause(identity + " STOPPED as " + state.cause() + " " + wrong + ": " + state.failure());
    }
    for (Service service : services) {
      if (service.started && !service.stopCalled) {
        sim.invariants().runningAfterStop(identity + "'s service " + service.index + " was never stopped, yet "
            + "its runner reported STOPPED (" + state.cause() + ")");
      }
    }
    if (releasedAfterStopAnswer && state.cause() != ElectionState.StopCause.CLOSED) {
      sim.invariants().contendedWithoutAccess(identity + " released after its loss handler said stop, yet stopped as "
          + state.cause() + ": only a close taken in before that answer may release");
    }
    boolean expectsRelease = closing && closeExpectsRelease && !closeDisturbed && !leftToAForeignWrite();
    boolean expectsReleaseAfterLoss = closing && closeAfterLossVersion != null && !closeDisturbed
        && state.cause() == ElectionState.StopCause.CLOSED && !fatalEver && !uncleanEver;
    int p = process;
    // Checked once the callbacks queued before STOPPED ran: awaitStopped() returns, no timer is left.
    sim.at(sim.now() + 1, () -> {
      if (!alive || process != p) {
        return;
      }
      try {
        if (!runner.awaitStopped(Duration.ZERO)) {
          sim.invariants().awaitStoppedHangs(identity + "'s awaitStopped() does not return after STOPPED");
        } else {
          // Every lane is idle now, so the blocking forms return at once too: awaitStopped(), and close() from
          // another thread (a shutdown hook), even with that thread's interrupt flag set; the cause stays.
          runner.awaitStopped();
          boolean interrupt = choices.nextBoolean();
          if (interrupt) {
            Thread.currentThread().interrupt();
          }
          runner.close();
          if (Thread.interrupted() != interrupt || !runner.isClosed() || !runner.state().equals(state)) {
            sim.invariants().awaitStoppedHangs(identity + "'s close() after STOPPED changed " + state + " into "
                + runner.state() + " or lost the caller's interrupt");
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (pendingTimers != 0) {
        sim.invariants().timersLeft(identity + " left " + pendingTimers + " timer(s) on its loop after STOPPED");
      }
      if (expectsRelease && servicesStoppedCleanly() && !released) {
        sim.invariants().lostRelease(identity + " closed as leader, undisturbed, but did not release");
      }
      LeaseRecord now = sim.server().current();
      boolean leftAsItWas = now != null && closeAfterLossVersion != null
          && closeAfterLossVersion.equals(now.resourceVersion());
      if (expectsReleaseAfterLoss && servicesStoppedCleanly() && (released || leftAsItWas)) {
        sim.invariants().releaseAfterLossChecked();
      }
      if (expectsReleaseAfterLoss && servicesStoppedCleanly() && !released && leftAsItWas) {
        sim.invariants().lostRelease(identity + " closed during its loss, undisturbed, its stops clean and the Lease "
            + "as it left it, but did not release");
      }
      checkLeadershipEvents(p);
      // The process goes on for a while before it exits (other shutdown hooks, a context closing): a stop()
      // that hung keeps its work running meanwhile, as it would in a real process.
      long linger = sim.random().nextLong(2 * stopTimeoutNanos + 1);
      sim.at(sim.now() + linger, () -> {
        if (alive && process == p) {
          die(closing ? restartAfterCloseNanos : sim.restartDelay());
        }
      });
    });
  }

  /**
   * Whether the close ended past its renew deadline with the Lease as another client wrote it before the close,
   * a write this process never took in before it closed: past the deadline the runner releases only what it wrote
   * itself (docs/reliability.md, rule 6), so that such a Lease is left to expire. A client that moved renewTime
   * (keeping the holder and the term) while the leader's renewal that would have shown it (a 409, then a re-read)
   * lost its answer leaves the close's release to conflict and be re-read after the deadline.
   */
  private boolean leftToAForeignWrite() {
    boolean left = closing && unseenForeignAtClose >= 0 && sim.server().foreignVersion() == unseenForeignAtClose
        && closeTerm != null && clock.mono(sim.now()) - closeTerm.validUntilNanos() >= 0;
    if (left) {
      sim.invariants().closeLeftToAForeignWrite();
    }
    return left;
  }

  /** Why {@code state}'s cause is wrong for what happened to this process, or null if it is right. */
  private String wrongCause(ElectionState.Stopped state) {
    switch (state.cause()) {
      case CLOSED:
        return closing ? null : "but was never closed";
      case LOST:
        if (spec.unelected()) {
          return "though it ran unelected";
        }
        if (!closing && spec.lossPolicy() == LossPolicy.Kind.EXIT && !exiterCalled) {
          return "under EXIT without exiting";
        }
        return spec.lossPolicy() == LossPolicy.Kind.EXIT || uncleanEver || lossAnsweredStop || fatalEver ? null
            : "under " + spec.lossPolicy() + " though every stop returned cleanly and nothing asked it to stop";
      case ACCESS_DENIED:
        if (verdict != Verdict.DENIED) {
          return "though the access reviews allowed it";
        }
        return runner != null && runner.startupFailure().orElse(null) == denial ? null
            : "but startupFailure() is " + (runner == null ? "unknown" : runner.startupFailure());
      case ELECTION_FAILED:
        return loopFaultHit || verdict == Verdict.FAILS ? null : "though nothing failed in its loop";
      case START_FAILED:
        return spec.unelected() && startThrewEver ? null : "though no unelected start failed";
      default:
        return "unknown cause";
    }
  }

  private boolean servicesStoppedCleanly() {
    for (Service service : services) {
      if (service.hung || service.stopThrew) {
        return false;
      }
    }
    return true;
  }

  // ---- probes: health() and state() read at any moment, as a kubelet and a metrics scrape do ------------------

  /**
   * Reads {@code state()} and {@code health()} and checks them against what the replica knows: while a stop
   * has outlived the stop timeout (and not yet returned), the process is not live; and the listener has heard
   * the state the runner shows (a listener that throws must not keep the others from hearing it).
   */
  void probe() {
    if (!alive || paused || runner == null) {
      return;
    }
    long now = sim.now();
    ElectionState state = runner.state();
    ElectionHealth health = runner.health();
    long deadline = stopRunStart + stopTimeoutNanos + stopTimeoutNanos / 500 + 1_000_000L;
    if (stopRunStart >= 0 && now >= deadline && now < stopRunEnd - 1_000_000L && !loopFaultHit && health.live()) {
      sim.invariants().liveAfterHungStop(identity + " reads live at " + now / 1_000_000 + "ms while a stop runs "
          + (now - stopRunStart) / 1_000_000 + "ms past its start, beyond stopTimeout " + stopTimeoutNanos / 1_000_000
          + "ms (" + state + ")");
    }
    Optional<LeadershipTerm> current = runner.currentTerm();
    boolean termAgrees = state instanceof ElectionState.Leading leading ? current.equals(Optional.of(leading.term()))
        : state instanceof ElectionState.NotContending ? current.isPresent() : current.isEmpty();
    if (!termAgrees || runner.isReady() != health.ready() || runner.isLive() != health.live()) {
      sim.invariants().readersDisagree(identity + " at " + now / 1_000_000 + "ms: state " + state + ", currentTerm "
          + current + ", health " + health + ", isReady " + runner.isReady() + ", isLive " + runner.isLive());
    }
    try {
      if (lastTerm != null && lastTerm.awaitEnd(Duration.ZERO) && lastTerm.isValid()) {
        sim.invariants().readersDisagree(identity + "'s term " + lastTerm + " has ended yet reads valid");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (state.equals(heard)) {
      mismatchSince = -1;
    } else if (mismatchSince < 0) {
      mismatchSince = now;
    } else if (now - mismatchSince > 50_000_000L) {
      sim.invariants().listenerMissed(identity + "'s listener last heard " + heard + " but the runner has been "
          + state + " for " + (now - mismatchSince) / 1_000_000 + "ms");
      mismatchSince = Long.MAX_VALUE / 2; // once
    }
  }

  // ---- the write gate --------------------------------------------------------------------------------------

  private void work(LeadershipTerm term, int p) {
    sim.at(sim.now() + retryNanos / 2, this, () -> {
      if (process == p && startedTerm == term && servicesRunning()) {
        gateWrite(term);
        work(term, p);
      }
    });
  }

  /** A write through the real gate's check: refused once the term is not valid on this process's clock. */
  private void gateWrite(LeadershipTerm term) {
    try {
      new WriteGateInterceptor(term, variant.runnerFlaw).before(null, SimHttp.write(), null);
    } catch (TermEndedException refused) {
      sim.invariants().gateClosed();
      return;
    }
    sim.dataWrite(this, term);
  }

  // ---- load ------------------------------------------------------------------------------------------------

  /**
   * Counts a Lease call (request or watch) in a sliding window on this process's clock: one retry period, or the
   * shortest lease duration among the replicas if that is shorter (under mixed timings a follower reads when the
   * holder's lease runs out, which may be more often than its own retry period). The changes of the Lease by others
   * that allow more are counted over the last two windows, so that a change just before the window, whose read and
   * take fall in it, counts.
   */
  private void countRequest(String what) {
    long m = monoNow();
    sends.addLast(m);
    sent.addLast(what + "@" + sim.now() / 1_000_000);
    while (m - sends.peekFirst() >= loadWindowNanos) {
      sends.pollFirst();
      sent.pollFirst();
    }
    sim.invariants().requestsInWindow(sends.size(), sent,
        sim.termChangesByOthers(index, sim.now() - 2 * loadWindowNanos));
  }

  // ---- watches, as the simulator calls back ----------------------------------------------------------------

  void watchOpened(int generation) {
    transport.watchEvent(generation, events -> events.opened());
  }

  void watchFailedToStart(int generation) {
    transport.watchEnded(generation);
    transport.watchEvent(generation, events -> events.closed());
  }

  void watchEvent(int generation, LeaseRecord record) {
    transport.watchEvent(generation, events -> events.changed(record));
  }

  void watchClosed(int generation) {
    transport.watchEnded(generation);
    transport.watchEvent(generation, events -> events.closed());
  }

  // ---- the seams -------------------------------------------------------------------------------------------

  /** The runner's loop: each task an event of this process, each timer on the process's own clock. */
  private final class Loop implements RunnerLoop {
    private final int p;

    Loop(int p) {
      this.p = p;
    }

    @Override
    public void execute(Runnable task) {
      if (process == p && transport != null && transport.handingVerdict) {
        Transport reviewed = transport;
        reviewed.handingVerdict = false;
        Runnable carriesVerdict = task;
        task = () -> {
          reviewed.verdictGiven = true;
          carriesVerdict.run();
        };
      }
      if (process == p && inline != null) {
        runInline(task);
      } else if (process == p) {
        sim.at(handBackTime(), SimReplica.this, task);
      }
    }

    @Override
    public Timer schedule(long delayNanos, Runnable task) {
      boolean[] state = new boolean[2]; // cancelled, done
      if (process != p) {
        return () -> { };
      }
      pendingTimers++;
      sim.trace(() -> identity + "/p" + p + " timer in " + delayNanos / 1e6 + "ms");
      long mono = monoNow();
      long at = Math.max(handBackTime(), clock.trueTimeOf(mono + Math.max(0, delayNanos), sim.now()));
      sim.at(at, SimReplica.this, () -> {
        if (state[0] || state[1]) {
          return;
        }
        state[1] = true;
        pendingTimers--;
        sim.trace(() -> identity + "/p" + p + " timer fires");
        task.run();
      });
      return () -> {
        if (!state[0] && !state[1] && process == p) {
          state[0] = true;
          pendingTimers--;
        }
      };
    }

    @Override
    public boolean inLoop() {
      return true;
    }

    /** Log lines inline, on the simulator's one thread: the schedules stay the runner's own. */
    @Override
    public Executor logWriter() {
      return Runnable::run;
    }
  }

  /**
   * User code: each run of a lane an event of this process, never before the lane's previous run has taken the
   * time its callbacks took (a lane is one thread: a hung stop() holds everything after it on that lane).
   */
  private final class UserCode implements Executor {
    private final int p;
    private final Map<Object, Long> laneFreeAt = new HashMap<>();

    UserCode(int p) {
      this.p = p;
    }

    @Override
    public void execute(Runnable run) {
      if (process != p) {
        return;
      }
      if (poolRejects > 0) {
        poolRejects--;
        loopFaultHits();
        throw new RejectedExecutionException("simulated: the callback pool rejected the task");
      }
      if (inline != null) {
        runInline(() -> {
          boolean outer = inCallback;
          inCallback = true;
          try {
            run.run();
          } finally {
            inCallback = outer;
            spent = 0;
            stopRunStart = -1; // inline, a stop's hand-back takes no time: nothing to probe
            stopRunEnd = -1;
          }
        });
        return;
      }
      Object lane = run instanceof CallbackLane.Run laneRun ? laneRun.lane() : run;
      long at = Math.max(handBackTime(), laneFreeAt.getOrDefault(lane, 0L));
      laneFreeAt.put(lane, at);
      sim.at(at, SimReplica.this, () -> {
        long outerSpent = spent;
        boolean outer = inCallback;
        spent = 0;
        inCallback = true;
        try {
          run.run();
        } finally {
          if (stopRunStart >= 0 && stopRunEnd < 0) {
            stopRunEnd = sim.now() + spent;
            if (stopRunEnd - stopRunStart > stopTimeoutNanos) {
              // A probe at a random moment while this stop may be past its deadline.
              int pr = process;
              long probeAt = stopRunStart + stopTimeoutNanos
                  + choices.nextLong(stopRunEnd - stopRunStart - stopTimeoutNanos);
              sim.at(probeAt, () -> {
                if (process == pr) {
                  probe();
                }
              });
            }
          }
          laneFreeAt.put(lane, sim.now() + spent);
          spent = outerSpent;
          inCallback = outer;
        }
      });
    }
  }

  /** The Lease calls over the simulated network; watches opened at the simulated server. */
  private final class Transport implements LeaseTransport {
    private final int p;
    private final Map<Integer, WatchEvents> watches = new HashMap<>();
    private int watchGeneration;
    private boolean closed;
    // The runner's loop took the preflight's verdict in; the verdict is being handed over now; reads of this
    // process still unanswered.
    private boolean verdictGiven;
    private boolean handingVerdict;
    private int readsInFlight;
    // The follower's watch lifecycle (h-attack4): updates of its own Lease sent in a row, since its last read or
    // create, while one of its watches was still open.
    private int ownUpdatesWithWatch;
    // The watches neither cancelled nor ended (closed, or failed to start) by the server.
    private final java.util.Set<Integer> liveWatches = new java.util.TreeSet<>();

    Transport(int p) {
      this.p = p;
    }

    @Override
    public Call read(Answered done) {
      ownUpdatesWithWatch = 0;
      return send(new LeaseStep.Read(0), done);
    }

    @Override
    public Call create(LeaseRecord record, Answered done) {
      ownUpdatesWithWatch = 0;
      return send(new LeaseStep.Create(record, 0), done);
    }

    @Override
    public Call delete(LeaseRecord released, Answered done) {
      throw new UnsupportedOperationException("an election's Lease is never deleted");
    }

    @Override
    public Call update(LeaseRecord record, Answered done) {
      if (identity.equals(record.holder()) && !liveWatches.isEmpty() && !closed && process == p) {
        // A take-over (a follower's update) keeps its watch; a renewal (the next one) must not.
        if (++ownUpdatesWithWatch >= 2) {
          sim.invariants().watchLifecycle("LEADER_KEEPS_WATCH: " + identity + "/p" + p + " renews with watch(es) "
              + liveWatches + " open");
        }
      } else {
        ownUpdatesWithWatch = 0;
      }
      return send(new LeaseStep.Update(record, 0), done);
    }

    /**
     * Invariant 10: no Lease call from a runner that may not contend (denied, or told by its loss handler); a
     * denied one may read and watch only until its verdict came (the first read overlaps the access reviews). A
     * closing runner told to stop may still release: a close taken in before the handler's answer answers the loss,
     * and after clean stops releases what the loss left as this replica wrote it (a read back, then a write of no
     * holder); it must then stop CLOSED (checked at STOPPED). {@code action}: null for a watch.
     */
    private void checkAllowed(Action action) {
      String what = action == null ? "Watch" : action.getClass().getSimpleName();
      boolean read = what.equals("Read") || what.equals("Watch");
      if ((verdict == Verdict.DENIED || verdict == Verdict.FAILS) && (!read || verdictGiven)) {
        sim.invariants().contendedWithoutAccess(identity + " sent " + what + " though its RBAC preflight "
            + (verdict == Verdict.DENIED ? "was denied" : "failed"));
      }
      boolean release = action instanceof LeaseStep.Read
          || action instanceof LeaseStep.Update update && update.record().holder() == null;
      if (lossAnsweredStop && closing && release) {
        releasedAfterStopAnswer = true;
      } else if (lossAnsweredStop) {
        sim.invariants().contendedWithoutAccess(identity + " sent " + what + " after its loss handler said stop");
      }
    }

    private void checkCrashing(String what) {
      if (crashing) {
        sim.invariants().requestAfterStop(identity + " sent " + what + " from its crash hook: a killed process "
            + "sends nothing");
      }
    }

    private void mayThrow(String what) {
      if (transportThrows > 0 && process == p && !closed) {
        transportThrows--;
        loopFaultHits();
        if (transportThrowsError) {
          throw new OutOfMemoryError("simulated: unable to create native thread");
        }
        throw new IllegalStateException("simulated: the I/O pool rejected " + what);
      }
    }

    private Call send(Action action, Answered done) {
      if (!closing && process == p && lastTerm != null && !lastTerm.isValid()) {
        contendedSinceLoss = true;
      }
      checkCrashing(action.getClass().getSimpleName());
      checkAllowed(action);
      mayThrow(action.getClass().getSimpleName());
      if (closed || process != p) {
        if (process == p) {
          sim.invariants().requestAfterStop(identity + " sent " + action.getClass().getSimpleName()
              + " after its transport was closed");
        }
        return () -> { };
      }
      boolean leading = runner != null && runner.state().kind() == ElectionState.Kind.LEADING;
      countRequest(action.getClass().getSimpleName() + (leading ? "(L)" : ""));
      boolean[] cancelled = {false};
      if (closeAtRenewalArmed && leading && action instanceof LeaseStep.Update update
          && identity.equals(update.record().holder())) {
        // The renewal reaches the server, its answer is lost; the close comes from outside as it goes out.
        closeAtRenewalArmed = false;
        cancelled[0] = true;
        long restart = closeAtRenewalRestartNanos;
        sim.at(sim.now(), () -> {
          if (alive && process == p) {
            SimReplica.this.close(restart);
          }
        });
      }
      // A read counts as in flight until its first answer or its cancel.
      boolean[] reading = {action instanceof LeaseStep.Read};
      readsInFlight += reading[0] ? 1 : 0;
      Runnable readOver = () -> {
        if (reading[0]) {
          reading[0] = false;
          readsInFlight--;
        }
      };
      sim.request(SimReplica.this, action, answer -> {
        readOver.run();
        if (!cancelled[0]) {
          seen(answer);
          done.answered(answer, failure(answer));
        }
      });
      return () -> {
        readOver.run();
        cancelled[0] = true;
      };
    }

    private void seen(Answer answer) {
      LeaseRecord record = answer instanceof Answer.Found found ? found.record()
          : answer instanceof Answer.Written written ? written.record() : null;
      if (record != null && process == p) {
        seenVersion = Math.max(seenVersion, Long.parseLong(record.resourceVersion()));
      }
    }

    private Throwable failure(Answer answer) {
      if (!(answer instanceof Answer.Failed failed)) {
        return null;
      }
      int code = failed.kind() == LeaseStep.FailureKind.CONFLICT ? LeaseCallFailed.CONFLICT
          : failed.kind() == LeaseStep.FailureKind.NOT_FOUND ? LeaseCallFailed.NOT_FOUND : 503;
      return new LeaseCallFailed(failed.failure(), null, code);
    }

    @Override
    public Call watch(WatchEvents events) {
      checkCrashing("Watch");
      checkAllowed(null);
      mayThrow("Watch");
      if (closed || process != p) {
        return () -> { };
      }
      int generation = ++watchGeneration;
      if (!liveWatches.isEmpty()) {
        sim.invariants().watchLifecycle("TWO_WATCHES: " + identity + "/p" + p + " opens watch " + generation
            + " while " + liveWatches + " still open");
      }
      liveWatches.add(generation);
      watches.put(generation, events);
      countRequest("Watch");
      sim.openWatch(SimReplica.this, generation);
      return () -> {
        liveWatches.remove(generation);
        if (watches.remove(generation) != null) {
          sim.cancelWatch(SimReplica.this);
        }
      };
    }

    void watchEnded(int generation) {
      liveWatches.remove(generation);
    }

    void watchEvent(int generation, Consumer<WatchEvents> deliver) {
      WatchEvents events = watches.get(generation);
      if (events != null) {
        deliver.accept(events);
      }
    }

    /**
     * The access reviews, as one round trip: granted, denied, or failing (a fault of the preflight itself), as the
     * process's verdict says.
     */
    @Override
    public Call preflight(Consumer<Optional<LeaseAccessDeniedException>> done, Consumer<Throwable> failed) {
      if (transportThrows > 0) {
        mayThrow("the access reviews");
      }
      boolean[] cancelled = {false};
      sim.trace(() -> identity + "/p" + p + " the access reviews, as the next Read");
      sim.request(SimReplica.this, new LeaseStep.Read(0), answer -> {
        if (!cancelled[0]) {
          cancelled[0] = true;
          if (verdict != Verdict.GRANTED && readsInFlight > 0) {
            sim.invariants().deniedWithReadInFlight();
          }
          // The verdict came when the runner's loop takes it in (the loop task it is handed over in runs), not
          // when the reviews answered: a timer of the elector's that is due before that task may still read.
          handingVerdict = true;
          try {
            if (verdict == Verdict.FAILS) {
              failed.accept(new IllegalStateException("simulated: the access reviews could not be built"));
            } else {
              done.accept(Optional.ofNullable(denial));
            }
          } finally {
            verdictGiven |= handingVerdict; // handed over without a loop task: taken in at once
            handingVerdict = false;
          }
        }
      });
      // A review that gets no answer fails after the client's timeout: the verdict is UNKNOWN, and it contends.
      sim.at(sim.now() + 2 * requestTimeoutNanos, SimReplica.this, () -> {
        if (!cancelled[0]) {
          cancelled[0] = true;
          verdictGiven = true;
          verdict = Verdict.GRANTED; // every review timed out: the verdict is UNKNOWN, which contends
          denial = null;
          done.accept(Optional.empty());
        }
      });
      return () -> cancelled[0] = true;
    }

    /** Written at once into the replica's model: Events take no part in the election the simulation checks. */
    @Override
    public void recordEvent(LeadershipEvent event, Runnable done) {
      checkCrashing("the Event \"" + event.message() + "\"");
      if (transportThrows > 0 && transportThrowsError && process == p) {
        // The Events' pool cannot start a thread either: its Error reaches the loop, as from the production
        // transport, which only takes a RejectedExecutionException (a full pool) for a dropped Event.
        transportThrows--;
        loopFaultHits();
        eventRefused = true;
        throw new OutOfMemoryError("simulated: unable to create native thread for an Event");
      }
      if (process == p) {
        sim.trace(() -> identity + "/p" + p + " Event " + event.kind() + " " + event.fencingToken());
        leadershipEvents.add(new RecordedEvent(p, event));
      }
      done.run();
    }

    @Override
    public void close() {
      closed = true;
      liveWatches.clear();
      if (!watches.isEmpty()) {
        watches.clear();
        sim.cancelWatch(SimReplica.this);
      }
    }
  }

  /** A listener that throws now and then (a RuntimeException, or an Error of a library missing at run time). */
  private final class Thrower implements ElectionListener {
    private void mayThrow() {
      callbackEntered();
      int pick = choices.nextInt(6);
      if (pick == 0) {
        throw new IllegalStateException("simulated listener failure");
      }
      if (pick == 1) {
        throw new NoClassDefFoundError("simulated/MissingAtRunTime");
      }
    }

    @Override
    public void stateChanged(ElectionState previous, ElectionState current) {
      mayThrow();
    }

    @Override
    public void following(Optional<String> leader) {
      mayThrow();
    }

    @Override
    public void renewed(Duration roundTrip) {
      mayThrow();
    }

    @Override
    public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
      mayThrow();
    }
  }

  /** What the replica hears from its runner, for the invariants. */
  private final class Watcher implements ElectionListener {
    @Override
    public void stateChanged(ElectionState previous, ElectionState current) {
      sim.trace(() -> identity + "/p" + process + " state " + current);
      heard = current;
      if (current instanceof ElectionState.Leading leading) {
        lastTerm = leading.term();
        contendedSinceLoss = false;
        sim.elected(SimReplica.this, leading.term());
      } else if (current instanceof ElectionState.Stopped stoppedState) {
        runnerStopped(stoppedState);
      }
    }
  }

  /** A service of the simulated replica: misbehaves as the schedule says, and says how long its stop took. */
  private final class Service implements LeaderService {
    final int index;
    boolean started;
    boolean stopCalled;
    boolean hung;
    boolean stopThrew;
    private long stopReturnsAt = Long.MAX_VALUE;

    Service(int index) {
      this.index = index;
    }

    boolean running() {
      return started && sim.now() < stopReturnsAt;
    }

    private boolean trouble(Trouble trouble) {
      return troubles[trouble.ordinal()] > 0;
    }


    @Override
    public void start(LeadershipTerm term) throws Exception {
      callbackEntered();
      // A start that throws started nothing: the sequence stops only the services that started.
      // Under a start trouble the last service's start throws, and each one before it may: a failed start may
      // leave services started that must be stopped.
      boolean fails = index == services.size() - 1 || choices.nextBoolean();
      if (fails && trouble(Trouble.START_THROWS_EXCEPTION)) {
        startThrewEver = true;
        throw new Exception("simulated start failure");
      }
      if (fails && trouble(Trouble.START_THROWS_ERROR)) {
        startThrewEver = true;
        throw new AssertionError("simulated Error from start");
      }
      if (fails && trouble(Trouble.START_THROWS_VM_ERROR)) {
        startThrewEver = true;
        fatalEver = true;
        throw new OutOfMemoryError("simulated: Java heap space, in start");
      }
      if (running()) {
        sim.invariants().selfOverlap(identity + "'s service " + index + " started again at " + sim.now() / 1_000_000
            + "ms while its previous run's work still runs");
      }
      started = true;
      stopCalled = false;
      hung = false;
      stopThrew = false;
      stopReturnsAt = Long.MAX_VALUE;
      if (spec.unelected()) {
        return; // its work is not the leader's: invariants 1 and 2 do not apply
      }
      runningTerm = term;
      if (index == services.size() - 1 && term.isValid()) {
        startedTerm = term;
        work(term, process);
      }
    }

    @Override
    public void stop() throws Exception {
      stopCalled = true;
      callbackEntered();
      hung = trouble(Trouble.STOP_HANGS);
      if (stopRunStart < 0 || stopRunEnd >= 0) {
        stopRunStart = sim.now() + spent;
        stopRunEnd = -1;
      }
      long began = sim.now() + spent;
      spent += hung ? hungStopNanos() : cleanStopNanos();
      stopReturnsAt = sim.now() + spent;
      sim.trace(() -> identity + "/p" + process + " service " + index + " stops, returning at "
          + stopReturnsAt / 1_000_000.0 + "ms");
      boolean throwsException = trouble(Trouble.STOP_THROWS_EXCEPTION);
      boolean throwsError = trouble(Trouble.STOP_THROWS_ERROR);
      uncleanEver |= hung || throwsException || throwsError;
      if (throwsException || throwsError) {
        // A stop that threw may have left its work running (LeaderService.stop): for as long as a hung one would
        // have run from the same call, so at least until then. Not a hung stop's time again after its return: a stop
        // that hung and then threw would keep its work past the 1.5 stop timeouts a hung stop is bounded by, beyond
        // the safety margin (found by the generated schedules: SimulationReplaysTest's
        // aHungStopClosedFromACallbackAndAThrowingStopPartitionedNeverOverlap, an OVERLAP the runner cannot prevent).
        stopThrew = true;
        stopReturnsAt = Math.max(stopReturnsAt, began + hungStopNanos());
      }
      if (throwsException) {
        throw new IllegalStateException("simulated stop failure");
      }
      if (throwsError) {
        throw new StackOverflowError("simulated Error from stop");
      }
    }

    private long cleanStopNanos() {
      return sim.random().nextLong(stopTimeoutNanos / (2L * spec.reconcilers()) + 1);
    }

    /**
     * Stops that hang take together (when all hang) past the stop timeout by up to half of it: so a hung service
     * is gone within 0.75 × (leaseDuration - renewDeadline) of the loss, before a follower may start. Hangs
     * that outlast the safety margin are what fencing is for; the runner warns of them, and they are left out.
     */
    private long hungStopNanos() {
      long total = stopTimeoutNanos + 1 + sim.random().nextLong(stopTimeoutNanos / 2 + 1);
      return total / spec.reconcilers() + 1;
    }

    @Override
    public String toString() {
      return identity + "-service-" + index;
    }
  }
}
