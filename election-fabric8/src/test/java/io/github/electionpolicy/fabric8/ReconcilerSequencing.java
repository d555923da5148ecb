package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.List;

/**
 * Starting and stopping one replica's reconcilers, without threads: the seam through which the simulation runs
 * the sequencing rules. {@link #of} adapts the runner's own {@link ServiceSequence}; {@link Harness}, the rules
 * as the simulation first wrote them down, stays as a cross-check.
 *
 * <p>The rules, as documented in {@link ServiceControl} plus those the runner is moving to:
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

  /** The sequencing the simulation uses: the runner's own {@link ServiceSequence}. */
  static ReconcilerSequencing of(List<LeaderService> reconcilers) {
    return new Real(new ServiceSequence(reconcilers));
  }

  /** The real rules: {@link ServiceSequence}, which {@link ServiceControl} runs on the runner's thread. */
  final class Real implements ReconcilerSequencing {
    private final ServiceSequence sequence;

    Real(ServiceSequence sequence) {
      this.sequence = sequence;
    }

    @Override
    public StartOutcome startAll(LeadershipTerm term) {
      ServiceSequence.StartOutcome outcome = sequence.startAll(term);
      switch (outcome.kind()) {
        case STARTED:
          return new StartOutcome(Start.STARTED, true);
        case TERM_ENDED:
          return new StartOutcome(Start.TERM_ENDED, outcome.stop().clean());
        default:
          return new StartOutcome(Start.FAILED, outcome.stop().clean() && !outcome.fatal());
      }
    }

    @Override
    public boolean stopAll() {
      return sequence.stopAll().clean();
    }

    @Override
    public boolean anyRunning() {
      return sequence.anyRunning();
    }
  }

  /** The rules above, written for the harness until {@code ServiceSequence} lands. */
  final class Harness implements ReconcilerSequencing {
    private final List<LeaderService> reconcilers;
    private final List<LeaderService> running = new ArrayList<>();

    Harness(List<LeaderService> reconcilers) {
      this.reconcilers = List.copyOf(reconcilers);
    }

    @Override
    public StartOutcome startAll(LeadershipTerm term) {
      for (LeaderService reconciler : reconcilers) {
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
      List<LeaderService> stopping = List.copyOf(running);
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
