package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/** One log of reconciler starts and stops shared by all replicas of a test, with monotonic instants. */
final class ServiceLog {

  enum Kind { START, STOP }

  record Entry(String replica, Kind kind, long nanos, LeadershipTerm term) {}

  private final List<Entry> entries = new CopyOnWriteArrayList<>();

  LeaderService service(String replica) {
    return new LeaderService() {
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

  /** Adds an entry as given: for tests of this log's own checks. */
  void add(String replica, Kind kind, long nanos) {
    entries.add(new Entry(replica, kind, nanos, null));
  }

  /**
   * Records that {@code replica}'s process crashed now: a crash ends all its work at once, so each of its
   * reconcilers still running gets a STOP at this instant (no stop() ran; the process is gone).
   */
  void crashed(String replica) {
    long now = System.nanoTime();
    int running = of(replica, Kind.START).size() - of(replica, Kind.STOP).size();
    for (int i = 0; i < running; i++) {
      entries.add(new Entry(replica, Kind.STOP, now, null));
    }
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
    return Await.present(() -> entries.stream()
        .filter(e -> (replica == null || e.replica().equals(replica)) && e.kind() == kind
            && e.nanos() - afterNanos >= 0)
        .findFirst(), timeout);
  }

  /** Replicas whose reconcilers run now: more starts than stops. */
  List<String> running() {
    return entries.stream().map(Entry::replica).distinct()
        .filter(r -> of(r, Kind.START).size() > of(r, Kind.STOP).size())
        .collect(Collectors.toList());
  }

  /**
   * Whether two replicas ever ran at the same time: empty if not, else a description of the first overlap.
   * A replica runs while it has more reconcilers started than stopped (it may run several); the entries are
   * replayed in time order, keeping each replica's count.
   */
  Optional<String> overlap() {
    List<Entry> all = entries();
    Map<String, Integer> runningCount = new HashMap<>();
    // Stable: entries with the same instant keep the order in which they were logged.
    for (Entry e : all.stream().sorted(Comparator.comparingLong(Entry::nanos)).collect(Collectors.toList())) {
      int count = runningCount.getOrDefault(e.replica(), 0) + (e.kind() == Kind.START ? 1 : -1);
      runningCount.put(e.replica(), Math.max(0, count));
      if (e.kind() == Kind.START) {
        Optional<String> other = runningCount.entrySet().stream()
            .filter(r -> !r.getKey().equals(e.replica()) && r.getValue() > 0).map(Map.Entry::getKey).findFirst();
        if (other.isPresent()) {
          return Optional.of(e.replica() + " started while " + other.get() + " still ran: " + all);
        }
      }
    }
    return Optional.empty();
  }
}
