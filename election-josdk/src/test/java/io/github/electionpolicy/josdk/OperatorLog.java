package io.github.electionpolicy.josdk;

import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.josdk.sample.Widget;
import io.github.electionpolicy.josdk.sample.WidgetReconciler;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * What the replicas' operators did, in the order it happened, with {@link System#nanoTime()} instants: when each
 * replica's operator began to start and when it had stopped, and every reconciliation's start and end. Shared by
 * the replicas of one test; thread-safe.
 */
final class OperatorLog {

  enum Kind { OPERATOR_STARTING, OPERATOR_STOPPED, RECONCILING, RECONCILED }

  record Event(Kind kind, String replica, String widget, int leaseTransitions, long nanos, Throwable failure) {}

  /** One replica's operator, from the start of its {@code start} until its {@code stop} returned. */
  record Run(String replica, int leaseTransitions, long startingNanos, long stoppedNanos) {
    boolean overlaps(Run other) {
      return startingNanos < other.stoppedNanos && other.startingNanos < stoppedNanos;
    }
  }

  private final List<Event> events = new CopyOnWriteArrayList<>();

  /**
   * A service to add to a replica's runner before its {@link OperatorService}: started first and stopped last, so
   * the run it records encloses the operator's.
   */
  LeaderService runs(String replica) {
    return new LeaderService() {
      @Override
      public void start(LeadershipTerm term) {
        events.add(new Event(Kind.OPERATOR_STARTING, replica, "", term.leaseTransitions(), System.nanoTime(), null));
      }

      @Override
      public void stop() {
        events.add(new Event(Kind.OPERATOR_STOPPED, replica, "", -1, System.nanoTime(), null));
      }

      @Override
      public String toString() {
        return "OperatorLog.runs(" + replica + ")";
      }
    };
  }

  /** Records reconciliations; {@code before} runs first, on the reconciliation thread. */
  WidgetReconciler.Observer reconciliations(Before before) {
    return new WidgetReconciler.Observer() {
      @Override
      public void reconciling(LeadershipTerm term, Widget widget) throws Exception {
        events.add(new Event(Kind.RECONCILING, term.holderIdentity(), widget.getMetadata().getName(),
            term.leaseTransitions(), System.nanoTime(), null));
        before.reconciling(term, widget);
      }

      @Override
      public void reconciled(LeadershipTerm term, Widget widget, Throwable failure) {
        events.add(new Event(Kind.RECONCILED, term.holderIdentity(), widget.getMetadata().getName(),
            term.leaseTransitions(), System.nanoTime(), failure));
      }
    };
  }

  WidgetReconciler.Observer reconciliations() {
    return reconciliations((term, widget) -> { });
  }

  /** Runs at the start of a reconciliation. */
  @FunctionalInterface
  interface Before {
    void reconciling(LeadershipTerm term, Widget widget) throws Exception;
  }

  List<Event> events() {
    return List.copyOf(events);
  }

  /** Every operator run so far; one still running ends at {@code Long.MAX_VALUE}. */
  List<Run> runs() {
    List<Run> runs = new ArrayList<>();
    for (Event event : events) {
      if (event.kind() == Kind.OPERATOR_STARTING) {
        long stopped = events.stream()
            .filter(e -> e.kind() == Kind.OPERATOR_STOPPED && e.replica().equals(event.replica())
                && e.nanos() >= event.nanos())
            .mapToLong(Event::nanos).min().orElse(Long.MAX_VALUE);
        runs.add(new Run(event.replica(), event.leaseTransitions(), event.nanos(), stopped));
      }
    }
    return runs;
  }

  /** The replicas whose operator runs now. */
  Set<String> running() {
    return runs().stream().filter(r -> r.stoppedNanos() == Long.MAX_VALUE).map(Run::replica)
        .collect(Collectors.toSet());
  }

  Optional<Run> lastRun(String replica) {
    List<Run> theirs = runs().stream().filter(r -> r.replica().equals(replica)).collect(Collectors.toList());
    return theirs.isEmpty() ? Optional.empty() : Optional.of(theirs.get(theirs.size() - 1));
  }

  /** The reconciliations (their starts) of one replica. */
  List<Event> reconciliations(String replica) {
    return events.stream().filter(e -> e.kind() == Kind.RECONCILING && e.replica().equals(replica))
        .collect(Collectors.toList());
  }

  /** Whether {@code replica} finished reconciling {@code widget}, without a failure. */
  boolean reconciled(String replica, String widget) {
    return events.stream().anyMatch(e -> e.kind() == Kind.RECONCILED && e.replica().equals(replica)
        && e.widget().equals(widget) && e.failure() == null);
  }

  /**
   * Reconciliations that broke term order: one of a term that began, or ended, after the operator of a later term
   * (a higher fencing token) had begun to start. Empty when every reconciliation of a term happened before the
   * next term's operator started.
   */
  List<String> reconciliationsOutOfTerm() {
    List<Run> runs = runs();
    List<String> violations = new ArrayList<>();
    for (Event event : events) {
      if (event.kind() != Kind.RECONCILING && event.kind() != Kind.RECONCILED) {
        continue;
      }
      for (Run later : runs) {
        if (later.leaseTransitions() > event.leaseTransitions() && later.startingNanos() < event.nanos()) {
          violations.add(event + " after " + later + " had begun");
        }
      }
    }
    return violations;
  }

  @Override
  public String toString() {
    return events.stream().map(Event::toString).collect(Collectors.joining("\n  ", "OperatorLog[\n  ", "]"));
  }
}
