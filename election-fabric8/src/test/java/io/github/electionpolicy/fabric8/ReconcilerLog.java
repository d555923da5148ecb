package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/** One log of reconciler starts and stops shared by all replicas of a test, with monotonic instants. */
final class ReconcilerLog {

  enum Kind { START, STOP }

  record Entry(String replica, Kind kind, long nanos, LeadershipTerm term) {}

  private final List<Entry> entries = new CopyOnWriteArrayList<>();

  Reconciler reconciler(String replica) {
    return new Reconciler() {
      @Override
      public void start(LeadershipTerm term) {
        entries.add(new Entry(replica, Kind.START, System.nanoTime(), term));
      }

      @Override
      public void stop() {
        entries.add(new Entry(replica, Kind.STOP, System.nanoTime(), null));
      }
    };
  }

  List<Entry> entries() {
    return List.copyOf(entries);
  }

  List<Entry> of(String replica, Kind kind) {
    return entries.stream().filter(e -> e.replica().equals(replica) && e.kind() == kind)
        .collect(Collectors.toList());
  }

  /** Waits until an entry matching replica and kind appears after {@code afterNanos}; returns it. */
  Optional<Entry> await(String replica, Kind kind, long afterNanos, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Optional<Entry> found = entries.stream()
          .filter(e -> (replica == null || e.replica().equals(replica)) && e.kind() == kind
              && e.nanos() - afterNanos >= 0)
          .findFirst();
      if (found.isPresent() || System.nanoTime() - deadline >= 0) {
        return found;
      }
      Thread.sleep(5);
    }
  }

  /** Replicas whose reconcilers run now: more starts than stops. */
  List<String> running() {
    return entries.stream().map(Entry::replica).distinct()
        .filter(r -> of(r, Kind.START).size() > of(r, Kind.STOP).size())
        .collect(Collectors.toList());
  }

  /**
   * The intervals during which each replica ran, checked pairwise: empty when no two replicas ever ran at
   * the same time, else a description of the overlap.
   */
  Optional<String> overlap() {
    List<Entry> all = entries();
    String runner = null;
    for (Entry e : all.stream().sorted((a, b) -> Long.compare(a.nanos(), b.nanos()))
        .collect(Collectors.toList())) {
      if (e.kind() == Kind.START) {
        if (runner != null && !runner.equals(e.replica())) {
          return Optional.of(e.replica() + " started while " + runner + " still ran: " + all);
        }
        runner = e.replica();
      } else if (e.replica().equals(runner)) {
        runner = null;
      }
    }
    return Optional.empty();
  }
}
