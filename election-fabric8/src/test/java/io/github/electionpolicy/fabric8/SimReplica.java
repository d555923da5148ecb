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
import java.util.concurrent.Executor;
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

  // close() as a fault.
  private boolean closing;
  private boolean closeArmed;
  private long closeArmedRestartNanos;
  private long restartAfterCloseNanos;
  private boolean closeExpectsRelease;
  boolean closeDisturbed;

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
    closeDisturbed = false;
    ElectionRunner.Builder builder = ElectionRunner.builder()
        .decision(MockApi.CONTEND)
        .settings(settings())
        .transport(transport)
        .loop(new Loop(process))
        .userCode(new UserCode(process))
        .ticker(ticker())
        .clock(wallClock())
        .flaw(variant.flaw)
        .runnerFlaw(variant.runnerFlaw)
        .listener(new Watcher());
    for (int i = 0; i < spec.reconcilers(); i++) {
      Service service = new Service(i);
      services.add(service);
      builder.service(service);
    }
    runner = builder.start();
  }

  private LeaseSettings settings() {
    LossPolicy policy = spec.lossPolicy() == LossPolicy.Kind.EXIT ? LossPolicy.exit(status -> exited())
        : LossPolicy.recontend();
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

  /** The exiter: the process ends at once, its Lease left to expire. */
  private void exited() {
    sim.invariants().exited();
    die(sim.restartDelay());
  }

  /** The process is gone (crash, exit, or the end after close): nothing of it runs any more. */
  void die(long restartAfterNanos) {
    if (!alive) {
      return;
    }
    alive = false;
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
    closeDisturbed = false;
    released = false;
    runner.closeAsync();
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
    if (state.cause() == ElectionState.StopCause.CLOSED && !closing) {
      sim.invariants().wrongCause(identity + " STOPPED as CLOSED but was never closed");
    } else if (state.cause() != ElectionState.StopCause.CLOSED && state.cause() != ElectionState.StopCause.LOST) {
      sim.invariants().wrongCause(identity + " STOPPED with " + state.cause() + ": " + state.failure());
    } else if (state.cause() == ElectionState.StopCause.LOST && !closing && spec.lossPolicy() == LossPolicy.Kind.EXIT) {
      sim.invariants().wrongCause(identity + " STOPPED as LOST under EXIT without exiting");
    }
    for (Service service : services) {
      if (service.started && !service.stopCalled) {
        sim.invariants().runningAfterStop(identity + "'s service " + service.index + " was never stopped, yet "
            + "its runner reported STOPPED (" + state.cause() + ")");
      }
    }
    boolean expectsRelease = closing && closeExpectsRelease && !closeDisturbed;
    int p = process;
    // Checked once the callbacks queued before STOPPED ran: awaitStopped() returns, no timer is left.
    sim.at(sim.now() + 1, () -> {
      if (!alive || process != p) {
        return;
      }
      try {
        if (!runner.awaitStopped(Duration.ZERO)) {
          sim.invariants().awaitStoppedHangs(identity + "'s awaitStopped() does not return after STOPPED");
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

  private boolean servicesStoppedCleanly() {
    for (Service service : services) {
      if (service.hung || service.stopThrew) {
        return false;
      }
    }
    return true;
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
   * holder's lease runs out, which may be more often than its own retry period).
   */
  private void countRequest(String what) {
    long m = monoNow();
    sends.addLast(m);
    sent.addLast(what + "@" + sim.now() / 1_000_000);
    while (m - sends.peekFirst() >= loadWindowNanos) {
      sends.pollFirst();
      sent.pollFirst();
    }
    sim.invariants().requestsInWindow(sends.size(), sent);
  }

  // ---- watches, as the simulator calls back ----------------------------------------------------------------

  void watchOpened(int generation) {
    transport.watchEvent(generation, events -> events.opened());
  }

  void watchFailedToStart(int generation) {
    transport.watchEvent(generation, events -> events.closed());
  }

  void watchEvent(int generation, LeaseRecord record) {
    transport.watchEvent(generation, events -> events.changed(record));
  }

  void watchClosed(int generation) {
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
      if (process == p) {
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
      long mono = monoNow();
      long at = Math.max(handBackTime(), clock.trueTimeOf(mono + Math.max(0, delayNanos), sim.now()));
      sim.at(at, SimReplica.this, () -> {
        if (state[0] || state[1]) {
          return;
        }
        state[1] = true;
        pendingTimers--;
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

    Transport(int p) {
      this.p = p;
    }

    @Override
    public Call read(Answered done) {
      return send(new LeaseStep.Read(0), done);
    }

    @Override
    public Call create(LeaseRecord record, Answered done) {
      return send(new LeaseStep.Create(record, 0), done);
    }

    @Override
    public Call update(LeaseRecord record, Answered done) {
      return send(new LeaseStep.Update(record, 0), done);
    }

    private Call send(Action action, Answered done) {
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
      sim.request(SimReplica.this, action, answer -> {
        if (!cancelled[0]) {
          done.answered(answer, failure(answer));
        }
      });
      return () -> cancelled[0] = true;
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
      if (closed || process != p) {
        return () -> { };
      }
      int generation = ++watchGeneration;
      watches.put(generation, events);
      countRequest("Watch");
      sim.openWatch(SimReplica.this, generation);
      return () -> {
        if (watches.remove(generation) != null) {
          sim.cancelWatch(SimReplica.this);
        }
      };
    }

    void watchEvent(int generation, Consumer<WatchEvents> deliver) {
      WatchEvents events = watches.get(generation);
      if (events != null) {
        deliver.accept(events);
      }
    }

    /** The access reviews, as one round trip; granted (the simulation's replicas may use the Lease). */
    @Override
    public Call preflight(Consumer<Optional<LeaseAccessDeniedException>> done, Consumer<Throwable> failed) {
      boolean[] cancelled = {false};
      sim.request(SimReplica.this, new LeaseStep.Read(0), answer -> {
        if (!cancelled[0]) {
          done.accept(Optional.empty());
        }
      });
      // A review that gets no answer fails after the client's timeout: the verdict is UNKNOWN, and it contends.
      sim.at(sim.now() + 2 * requestTimeoutNanos, SimReplica.this, () -> {
        if (!cancelled[0]) {
          cancelled[0] = true;
          done.accept(Optional.empty());
        }
      });
      return () -> cancelled[0] = true;
    }

    /** Written at once into the replica's model: Events take no part in the election the simulation checks. */
    @Override
    public void recordEvent(LeadershipEvent event, Runnable done) {
      if (process == p) {
        leadershipEvents.add(new RecordedEvent(p, event));
      }
      done.run();
    }

    @Override
    public void close() {
      closed = true;
      if (!watches.isEmpty()) {
        watches.clear();
        sim.cancelWatch(SimReplica.this);
      }
    }
  }

  /** What the replica hears from its runner, for the invariants. */
  private final class Watcher implements ElectionListener {
    @Override
    public void stateChanged(ElectionState previous, ElectionState current) {
      if (current instanceof ElectionState.Leading leading) {
        lastTerm = leading.term();
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

    private void callbackEntered() {
      if (closeArmed) {
        closeArmed = false;
        close(closeArmedRestartNanos);
      }
    }

    @Override
    public void start(LeadershipTerm term) throws Exception {
      callbackEntered();
      // A start that throws started nothing: the sequence stops only the services that started.
      if (trouble(Trouble.START_THROWS_EXCEPTION)) {
        throw new Exception("simulated start failure");
      }
      if (trouble(Trouble.START_THROWS_ERROR)) {
        throw new AssertionError("simulated Error from start");
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
      spent += hung ? hungStopNanos() : cleanStopNanos();
      stopReturnsAt = sim.now() + spent;
      boolean throwsException = trouble(Trouble.STOP_THROWS_EXCEPTION);
      boolean throwsError = trouble(Trouble.STOP_THROWS_ERROR);
      if (throwsException || throwsError) {
        // A stop that threw may have left its work running (LeaderService.stop): for as long as a hung one.
        stopThrew = true;
        stopReturnsAt += hungStopNanos();
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
