package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.SimSchedule.Trouble;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The runner's side of one simulated process, as {@link ElectionRunner}, {@link ServiceControl} and
 * {@link LossReaction} do it: reconcilers start and stop on a control "thread" (a queue of tasks, one at a
 * time, each taking the simulated time its stops took), the loss policy runs after the stops (EXIT ends the
 * process without release; RECONTEND waits until they stopped), and close() stops the reconcilers and then lets
 * the loop release, or abandon the Lease when a stop failed or hung. The sequencing rules are behind
 * {@link ReconcilerSequencing}.
 *
 * <p>While its reconcilers run, the replica writes through a gate every half retry period: a write is sent
 * only if the term is valid at that instant on the replica's own clock.
 *
 * <p>Not thread-safe (one thread).
 */
final class SimRunner implements SimReconciler.Host {

  private final Simulator sim;
  private final SimReplica replica;
  private final ReconcilerSequencing sequencing;
  private final ArrayDeque<Task> control = new ArrayDeque<>();
  private boolean controlBusy;
  private long spentNanos;
  private Task hungStop;

  private boolean closing;
  private LeadershipTerm currentTerm;
  private boolean lossWaiting;
  private boolean closeArmed;
  private long closeArmedRestartNanos;

  /** From the first start() call until the stops are done (or the process died): invariant 1's "running". */
  boolean reconcilersRunning;
  /** The term the reconcilers started under, all of them, if they did. */
  LeadershipTerm startedTerm;
  /**
   * The replica was paused while its reconcilers ran, or its Lease was deleted under it: an overlap until they
   * stopped is the fault's, not the protocol's (the write gate and the server's fencing are what guard it).
   */
  boolean pauseExcused;
  /** The term the reconcilers were started under, until they stopped. */
  LeadershipTerm runningTerm;

  // What invariant 4 needs to judge a graceful close.
  private boolean closeExpectsRelease;
  boolean closeDisturbed;
  private boolean closeStopsClean;

  SimRunner(Simulator sim, SimReplica replica) {
    this.sim = sim;
    this.replica = replica;
    List<LeaderService> reconcilers = new ArrayList<>();
    for (int i = 0; i < replica.spec.reconcilers(); i++) {
      reconcilers.add(new SimReconciler(this, i));
    }
    // The old runner's rule (a failed start's term left valid) needs sequencing that does not end it either.
    this.sequencing = replica.variant == SimVariant.FAILED_START_TERM_LEFT_VALID
        ? new ReconcilerSequencing.Harness(reconcilers) : ReconcilerSequencing.of(reconcilers);
  }

  // ---- the control thread ----------------------------------------------------------------------------------

  /** A task on the control thread: {@code run} calls the reconcilers; {@code done} comes after the time spent. */
  private abstract static class Task {
    boolean finished;

    abstract void run();

    void done() {}
  }

  private void submit(Task task) {
    control.add(task);
    if (!controlBusy) {
      runNext();
    }
  }

  private void runNext() {
    Task task = control.poll();
    if (task == null) {
      controlBusy = false;
      return;
    }
    controlBusy = true;
    sim.at(sim.now(), replica, () -> {
      spentNanos = 0;
      task.run();
      sim.at(sim.now() + spentNanos, replica, () -> {
        task.finished = true;
        if (!sequencing.anyRunning()) {
          reconcilersRunning = false;
          pauseExcused = false;
          runningTerm = null;
          if (startedTerm != null && startedTerm.hasEnded()) {
            startedTerm = null;
          }
        }
        task.done();
        runNext();
      });
    });
  }

  private final class StopTask extends Task {
    private final Runnable then;
    boolean clean;

    StopTask(Runnable then) {
      this.then = then;
    }

    @Override
    void run() {
      startedTerm = null;
      clean = sequencing.stopAll();
    }

    @Override
    void done() {
      then.run();
    }
  }

  /** As ServiceControl.stopAndWait: true once stopped cleanly within the timeout; false at once if hung. */
  private void stopAndWait(long timeoutNanos, Consumer<Boolean> then) {
    if (hungStop != null && !hungStop.finished) {
      then.accept(false);
      return;
    }
    boolean[] decided = {false};
    StopTask[] task = new StopTask[1];
    task[0] = new StopTask(() -> {
      if (!decided[0]) {
        decided[0] = true;
        then.accept(task[0].clean);
      }
    });
    long deadline = replica.clock.trueTimeOf(replica.monoNow() + timeoutNanos, sim.now());
    sim.at(deadline, replica, () -> {
      if (!decided[0]) {
        decided[0] = true;
        hungStop = task[0];
        then.accept(false);
      }
    });
    submit(task[0]);
  }

  // ---- the elector's events, as ElectionRunner.ElectorEvents ------------------------------------------

  void elected(LeadershipTerm term) {
    if (closing) {
      return;
    }
    currentTerm = term;
    replica.lastTerm = term;
    submit(new Task() {
      private ReconcilerSequencing.StartOutcome outcome;

      @Override
      void run() {
        if (!term.isValid()) {
          return;
        }
        runningTerm = term;
        outcome = sequencing.startAll(term);
        if (outcome.kind() == ReconcilerSequencing.Start.STARTED) {
          startedTerm = term;
          work(term);
        }
      }

      @Override
      void done() {
        if (outcome != null && outcome.kind() == ReconcilerSequencing.Start.FAILED) {
          if (replica.variant != SimVariant.FAILED_START_TERM_LEFT_VALID) {
            // Nothing may run under a term given up: end it before the release frees the Lease for another.
            term.end();
          }
          // A stop that failed or hung: the Lease is left to expire, not released.
          replica.relinquish(outcome.stoppedCleanly() && spentNanos <= replica.stopTimeoutNanos);
        }
      }
    });
  }

  void lost(LeadershipTerm term) {
    currentTerm = null;
    if (closing) {
      replica.afterLoss(false);
      return;
    }
    if (replica.spec.lossPolicy() == LossPolicy.Kind.EXIT) {
      // The process exits after the stops (or the stop timeout): a crash without release.
      stopAndWait(replica.stopTimeoutNanos, clean -> {
        sim.invariants().exited();
        replica.die(sim.restartDelay());
      });
      return;
    }
    // Contending again while old reconcilers still run could make two runs overlap: wait them out.
    lossWaiting = true;
    submit(new StopTask(() -> {
      if (lossWaiting) {
        lossWaiting = false;
        replica.afterLoss(true);
      }
    }));
  }

  // ---- close, as ElectionRunner.close / stopThenRelease ---------------------------------------------

  void armCloseFromCallback(long restartAfterNanos) {
    closeArmed = true;
    closeArmedRestartNanos = restartAfterNanos;
  }

  void disarm() {
    closeArmed = false;
  }

  void close(long restartAfterNanos) {
    if (closing || !replica.alive) {
      return;
    }
    closing = true;
    LeadershipTerm term = currentTerm;
    // Expected to release: a valid leader whose term the Lease still names, with no fault in its way.
    closeExpectsRelease = term != null && replica.protocol.role() == LeaseProtocol.Role.LEADING && term.isValid()
        && sim.leaseNames(term) && !replica.paused && !sim.network().disturbs(replica.index) && !troubled();
    closeDisturbed = false;
    replica.released = false;
    replica.beginClose();
    if (term != null) {
      term.end();
    }
    if (lossWaiting) {
      lossWaiting = false;
      sim.at(sim.now(), replica, () -> replica.afterLoss(false));
    }
    Runnable end = () -> {
      if (closeExpectsRelease && !closeDisturbed && closeStopsClean && !replica.released) {
        sim.invariants().lostRelease(replica.identity + " closed as leader, undisturbed, but did not release");
      }
      replica.die(restartAfterNanos);
    };
    if (replica.variant == SimVariant.RELEASE_BEFORE_STOP) {
      replica.finish(SimReplica.FinishHow.RELEASE);
      replica.whenLoopDone(() -> stopAndWait(replica.stopTimeoutNanos, clean -> {
        closeStopsClean = clean;
        end.run();
      }));
      return;
    }
    // From inside a callback, the stop queues behind it on the control thread, as the real finisher does.
    stopAndWait(replica.stopTimeoutNanos, stopped -> {
      closeStopsClean = stopped;
      replica.finish(stopped ? SimReplica.FinishHow.RELEASE : SimReplica.FinishHow.ABANDON);
      replica.whenLoopDone(end);
    });
  }

  private boolean troubled() {
    for (int count : replica.troubles) {
      if (count > 0) {
        return true;
      }
    }
    return false;
  }

  // ---- the write gate ---------------------------------------------------------------------------------------

  private void work(LeadershipTerm term) {
    sim.at(sim.now() + replica.retryNanos / 2, replica, () -> {
      if (startedTerm == term && reconcilersRunning) {
        gateWrite(term);
        work(term);
      }
    });
  }

  private void gateWrite(LeadershipTerm term) {
    if (term.isValid()) {
      sim.dataWrite(replica, term);
    } else {
      sim.invariants().gateClosed();
    }
  }

  void paused() {
    excuse();
  }

  private void excuse() {
    if (reconcilersRunning) {
      pauseExcused = true;
    }
  }



  /** On resume the reconcilers act first, before the election logic has caught up. */
  void resumed() {
    if (startedTerm != null && reconcilersRunning) {
      gateWrite(startedTerm);
    }
  }

  void processDied() {
    reconcilersRunning = false;
    pauseExcused = false;
    startedTerm = null;
    runningTerm = null;
    control.clear();
    if (currentTerm != null) {
      currentTerm.end();
    }
  }

  // ---- SimReconciler.Host ------------------------------------------------------------------------------------

  @Override
  public boolean trouble(Trouble trouble) {
    return replica.troubles[trouble.ordinal()] > 0;
  }

  @Override
  public void callbackEntered() {
    if (closeArmed) {
      closeArmed = false;
      close(closeArmedRestartNanos);
    }
  }

  @Override
  public void startCalled() {
    reconcilersRunning = true;
  }

  @Override
  public void spent(long nanos) {
    spentNanos += nanos;
  }

  @Override
  public long cleanStopNanos() {
    return sim.random().nextLong(replica.stopTimeoutNanos / (2L * replica.spec.reconcilers()) + 1);
  }

  /**
   * Stops that hang take together (when all hang) past the stop timeout by up to half of it: so a hung
   * reconciler is gone within 0.75 × (leaseDuration - renewDeadline) of the loss, before a follower may start.
   * Hangs that outlast the safety margin are what fencing is for; the runner warns of them, and they are left out.
   */
  @Override
  public long hungStopNanos() {
    long total = replica.stopTimeoutNanos + 1 + sim.random().nextLong(replica.stopTimeoutNanos / 2 + 1);
    return total / replica.spec.reconcilers() + 1;
  }
}
