package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Action;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import io.github.electionpolicy.fabric8.LeaseStep.LossCause;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import io.github.electionpolicy.fabric8.SimSchedule.ReplicaSpec;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One simulated replica: a process (restarted fresh after a crash, an exit or a close) that runs the real
 * {@link LeaseProtocol} through a driver that mirrors {@link LeaseElector#run()} step for step, on simulated
 * time. Where the real driver blocks (a request, a wait), this one returns and is called back by an event:
 * the answer or the timeout of the request in flight, the end of a wait, or an input (close, finish,
 * relinquish, a watch input), taken in the same order as {@code LeaseElector.await}. The runner's side
 * (reconcilers, loss policy, close) is {@link SimRunner}.
 *
 * <p>Not thread-safe (one thread).
 */
final class SimReplica implements SimWatch.Wire {

  /** How the loop ends when the runner closes, as in LeaseElector.Finish. */
  enum FinishHow { NONE, RELEASE, ABANDON }

  final int index;
  final String identity;
  final ReplicaSpec spec;
  final long leaseNanos;
  final long renewDeadlineNanos;
  final long retryNanos;
  final long requestTimeoutNanos;
  final long stopTimeoutNanos;
  private final long loadWindowNanos;
  private final Simulator sim;
  final SimVariant variant;
  final int[] troubles = new int[SimSchedule.Trouble.values().length];

  // The process. `process` numbers incarnations: events of a dead one are dropped.
  int process;
  boolean alive;
  boolean paused;
  List<Simulator.Event> deferred = new ArrayList<>();
  SimClock clock;
  LeaseProtocol protocol;
  SimWatch watch;
  SimRunner runner;
  private final ArrayDeque<Long> sends = new ArrayDeque<>();
  private final ArrayDeque<String> sent = new ArrayDeque<>();

  // The elector loop, as in LeaseElector.
  private boolean awaiting;
  private long awaitUntil;
  private int waitNumber;
  private long inflight;
  boolean loopDone;
  private Runnable onLoopDone;
  private boolean closing;
  private boolean closeDelivered;
  private FinishHow finish = FinishHow.NONE;
  private boolean finishDelivered;
  private Boolean relinquishRelease;
  LeadershipTerm term;
  private boolean termLapsed;
  /**
   * The last term this process handed to its runner, ended or not: invariant 2 looks at it. A term elected after
   * close() began is never handed out (nothing runs under it), so it is not one.
   */
  LeadershipTerm lastTerm;
  LossCause lastLossCause;
  boolean released;

  SimReplica(Simulator sim, int index, ReplicaSpec spec, SimVariant variant) {
    this.sim = sim;
    this.index = index;
    this.identity = "replica-" + index;
    this.spec = spec;
    this.variant = variant;
    this.leaseNanos = spec.leaseNanos();
    this.renewDeadlineNanos = spec.renewDeadlineMillis() * 1_000_000L;
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
    protocol = newProtocol();
    watch = new SimWatch(this, retryNanos, leaseNanos);
    runner = new SimRunner(sim, this);
    sends.clear();
    sent.clear();
    awaiting = false;
    inflight = 0;
    loopDone = false;
    onLoopDone = null;
    closing = false;
    closeDelivered = false;
    finish = FinishHow.NONE;
    finishDelivered = false;
    relinquishRelease = null;
    term = null;
    termLapsed = false;
    lastTerm = null;
    lastLossCause = null;
    released = false;
    drive(in(protocol.start(now())));
  }

  LeaseProtocol newProtocol() {
    return new LeaseProtocol(identity, leaseNanos, renewDeadlineNanos, retryNanos, requestTimeoutNanos,
        sim.random().nextLong(), variant.flaw);
  }

  /** The process is gone (crash, exit, or the end after close): nothing of it runs any more. */
  void die(long restartAfterNanos) {
    if (!alive) {
      return;
    }
    alive = false;
    paused = false;
    deferred = new ArrayList<>();
    runner.processDied();
    sim.cancelWatch(this);
    process++;
    sim.restartLater(this, restartAfterNanos);
  }

  void pause(long forNanos) {
    if (!alive || paused) {
      return;
    }
    paused = true;
    runner.paused();
    int p = process;
    sim.at(sim.now() + forNanos, () -> resume(p));
  }

  /** The worst case: the reconcilers act first, then the election logic catches up, oldest event first. */
  private void resume(int p) {
    if (!alive || process != p) {
      return;
    }
    paused = false;
    runner.resumed();
    List<Simulator.Event> held = deferred;
    deferred = new ArrayList<>();
    for (Simulator.Event event : held) {
      sim.dispatch(event);
    }
  }

  Moment now() {
    long t = sim.now();
    return new Moment(clock.mono(t), clock.wall(t));
  }

  @Override
  public long monoNow() {
    return clock.mono(sim.now());
  }

  /** A Ticker on this process's own clock. */
  Ticker ticker() {
    SimClock mine = clock;
    return () -> mine.mono(sim.now());
  }

  private LeaseStep in(LeaseStep step) {
    sim.countStep();
    return step;
  }

  // ---- the loop, as in LeaseElector.run() --------------------------------------------------------------

  void drive(LeaseStep first) {
    LeaseStep step = first;
    while (true) {
      take(step);
      Action action = step.action();
      if (action instanceof LeaseStep.Read read) {
        send(action, read.answerByNanos());
        return;
      } else if (action instanceof LeaseStep.Create create) {
        send(action, create.answerByNanos());
        return;
      } else if (action instanceof LeaseStep.Update update) {
        send(action, update.answerByNanos());
        return;
      } else if (action instanceof LeaseStep.Await await) {
        if (termLapsed) {
          termLapsed = false;
          step = in(protocol.lapsed(now()));
          continue;
        }
        if (protocol.role() == LeaseProtocol.Role.FOLLOWING) {
          watch.ensureRunning(closing);
        }
        awaiting = true;
        awaitUntil = await.untilNanos();
        LeaseStep next = pollInputs();
        if (next != null) {
          awaiting = false;
          step = next;
          continue;
        }
        int number = ++waitNumber;
        sim.at(clock.trueTimeOf(awaitUntil, sim.now()), this, () -> {
          if (awaiting && waitNumber == number) {
            poke();
          }
        });
        return;
      } else if (action instanceof LeaseStep.HandleLoss) {
        LeadershipTerm lostTerm = term;
        term = null;
        lostTerm.end();
        runner.lost(lostTerm);
        return;
      } else {
        watch.stop();
        loopDone = true;
        if (onLoopDone != null) {
          Runnable then = onLoopDone;
          onLoopDone = null;
          then.run();
        }
        return;
      }
    }
  }

  /** Acts on what a step signals, as LeaseElector.take does. */
  private void take(LeaseStep step) {
    for (LeaseStep.Signal signal : step.signals()) {
      if (signal instanceof LeaseStep.Elected elected) {
        watch.stop();
        LeaseRecord record = elected.record();
        term = LeadershipTerm.elected(identity, record.transitions(),
            record.acquireTime() == null ? clock.wall(sim.now()) : record.acquireTime(),
            record.resourceVersion() == null ? "" : record.resourceVersion(), ticker(), elected.validUntilNanos());
        termLapsed = false;
        sim.elected(this, term);
        runner.elected(term);
      } else if (signal instanceof LeaseStep.Renewed renewed) {
        termLapsed |= term != null && !term.extendUntil(renewed.validUntilNanos());
      } else if (signal instanceof LeaseStep.Lost lost) {
        lastLossCause = lost.cause();
      } else if (signal instanceof LeaseStep.Fact fact && fact.kind() == FactKind.RELEASED) {
        released = true;
      }
    }
  }

  /** The inputs LeaseElector.await takes, in its order; null when there is none and the wait goes on. */
  private LeaseStep pollInputs() {
    if (relinquishRelease != null) {
      boolean release = relinquishRelease;
      relinquishRelease = null;
      return in(protocol.relinquish(now(), release));
    }
    if (finish != FinishHow.NONE && !finishDelivered) {
      finishDelivered = true;
      closeDelivered = true;
      return in(protocol.finish(now(), finish == FinishHow.RELEASE));
    }
    if (closing && !closeDelivered) {
      closeDelivered = true;
      return in(protocol.close(now()));
    }
    SimWatch.Input input = watch.takeInput();
    if (input != null) {
      return in(input.deliverTo(protocol, now()));
    }
    if (awaitUntil - monoNow() <= 0) {
      return in(protocol.wake(now()));
    }
    return null;
  }

  /** Something arrived: a waiting loop takes it in now (the real one is notified). */
  void poke() {
    if (alive && !paused && awaiting) {
      LeaseStep next = pollInputs();
      if (next != null) {
        awaiting = false;
        drive(next);
      }
    }
  }

  void afterLoss(boolean contendAgain) {
    if (!alive) {
      return;
    }
    if (contendAgain && !closing && variant == SimVariant.NO_BACKOFF_AFTER_FAILED_START
        && lastLossCause == LossCause.START_FAILED) {
      protocol = newProtocol();
      drive(in(protocol.start(now())));
      return;
    }
    drive(in(protocol.afterLoss(now(), contendAgain)));
  }

  // ---- inputs from the runner, as LeaseElector's beginClose / finish / relinquish ----------------------

  void beginClose() {
    closing = true;
    poke();
  }

  void finish(FinishHow how) {
    closing = true;
    if (finish == FinishHow.NONE) {
      finish = how;
    }
    poke();
  }

  void relinquish(boolean release) {
    relinquishRelease = release;
    poke();
  }

  /** Runs {@code then} once the loop has finished, or after the join timeout of ElectionRunner.close. */
  void whenLoopDone(Runnable then) {
    if (loopDone) {
      then.run();
      return;
    }
    onLoopDone = then;
    sim.at(sim.now() + 5 * requestTimeoutNanos + 1_000_000_000L, this, () -> {
      if (onLoopDone == then) {
        onLoopDone = null;
        then.run();
      }
    });
  }

  // ---- requests -------------------------------------------------------------------------------------------

  private void send(Action action, long answerByNanos) {
    long id = sim.nextRequestId();
    inflight = id;
    countRequest(action.getClass().getSimpleName() + (protocol.role() == LeaseProtocol.Role.LEADING ? "(L)" : ""));
    // As LeaseElector and LeaseRequests: wait until the answer-by time, but never longer than requestTimeout.
    long mono = monoNow();
    long wait = Math.max(1, Math.min(answerByNanos - mono, requestTimeoutNanos));
    long timeoutAt = Math.max(sim.now() + 1, clock.trueTimeOf(mono + wait, sim.now()));
    sim.at(timeoutAt, this, () -> complete(id, new Answer.Failed(FailureKind.OTHER, "timeout")));
    sim.request(this, action, answer -> complete(id, answer));
  }

  private void complete(long id, Answer answer) {
    if (inflight != id) {
      return;
    }
    inflight = 0;
    drive(in(protocol.answer(now(), answer)));
  }

  /**
   * Counts a Lease call (request or watch) in a sliding window on this process's clock: one retry period, or the
   * shortest lease duration among the replicas if that is shorter (under mixed timings a follower reads when the
   * holder's lease runs out, which may be more often than its own retry period).
   */
  void countRequest(String what) {
    long m = monoNow();
    sends.addLast(m);
    sent.addLast(what + "@" + sim.now() / 1_000_000);
    while (m - sends.peekFirst() >= loadWindowNanos) {
      sends.pollFirst();
      sent.pollFirst();
    }
    sim.invariants().requestsInWindow(sends.size(), sent);
  }

  // ---- the watch ------------------------------------------------------------------------------------------

  @Override
  public void open(int generation) {
    countRequest("Watch");
    sim.openWatch(this, generation);
  }

  @Override
  public void cancel() {
    sim.cancelWatch(this);
  }

  void watchOpened(int generation) {
    watch.opened(generation);
    poke();
  }

  void watchFailedToStart(int generation) {
    watch.failedToStart(generation);
  }

  void watchEvent(int generation, LeaseRecord record) {
    watch.changed(generation, record, monoNow());
    poke();
  }

  void watchClosed(int generation) {
    watch.closed(generation);
    poke();
  }
}
