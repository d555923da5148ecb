package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.List;

/**
 * Starting and stopping one replica's reconcilers, without threads: the seam through which the simulation runs
 * the sequencing rules. {@code ReconcilerSequence} (branch runner-fixes) extracts the same rules from
 * {@link ReconcilerControl}; once it lands, {@link #of} returns an adapter over it, the one line to change.
 *
 * <p>The rules, as documented in {@link ReconcilerControl} plus those the runner is moving to:
 * <ul>
 *   <li>Start in order, each only while the term is still valid; if the term ended meanwhile, stop those
 *       started (nothing may run under an ended term).
 *   <li>A start that throws anything ({@link Exception} or {@link Error}) is a failed start: stop those
 *       started; the caller then relinquishes the term, releasing only if every stop was clean.
 *   <li>Stop in reverse order, and call every {@code stop()} whatever the others throw ({@link Throwable}).
 * </ul>
 *
 * <p>Not thread-safe: the simulation calls it from its one thread.
 */
interface ReconcilerSequencing {

  /** How a start ended. */
  enum Start { STARTED, TERM_ENDED, FAILED }

  /**
   * @param kind how it ended
   * @param stoppedCleanly when not STARTED: whether every stop it had to make returned without throwing
   */
  record StartOutcome(Start kind, boolean stoppedCleanly) {}

  StartOutcome startAll(LeadershipTerm term);

  /** Stops every running reconciler; true when none threw. */
  boolean stopAll();

  boolean anyRunning();

  /** The sequencing the simulation uses; swap in {@code ReconcilerSequence} here. */
  static ReconcilerSequencing of(List<Reconciler> reconcilers) {
    return new Harness(reconcilers);
  }

  /** The rules above, written for the harness until {@code ReconcilerSequence} lands. */
  final class Harness implements ReconcilerSequencing {
    private final List<Reconciler> reconcilers;
    private final List<Reconciler> running = new ArrayList<>();

    Harness(List<Reconciler> reconcilers) {
      this.reconcilers = List.copyOf(reconcilers);
    }

    @Override
    public StartOutcome startAll(LeadershipTerm term) {
      for (Reconciler reconciler : reconcilers) {
        if (!term.isValid()) {
          break;
        }
        try {
          reconciler.start(term);
          running.add(reconciler);
        } catch (Throwable failure) {
          return new StartOutcome(Start.FAILED, stopAll());
        }
      }
      if (!term.isValid()) {
        return new StartOutcome(Start.TERM_ENDED, stopAll());
      }
      return new StartOutcome(Start.STARTED, true);
    }

    @Override
    public boolean stopAll() {
      // A snapshot, cleared first: a stop() that re-enters (say, by closing) finds nothing left to stop.
      List<Reconciler> stopping = List.copyOf(running);
      running.clear();
      boolean clean = true;
      for (int i = stopping.size() - 1; i >= 0; i--) {
        try {
          stopping.get(i).stop();
        } catch (Throwable failure) {
          clean = false;
        }
      }
      return clean;
    }

    @Override
    public boolean anyRunning() {
      return !running.isEmpty();
    }
  }
}
