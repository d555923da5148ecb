package io.github.electionpolicy.examples;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * When each replica started leading, on the monotonic clock, as the adapter's listeners report it; the
 * demo's take-over times are measured on it.
 *
 * <p>Thread-safe: listeners of every replica record here from their own threads.
 */
final class LeadershipTimeline {

  /** One replica started leading at {@code nanos} ({@link System#nanoTime()}) with {@code term}. */
  record Elected(String replica, long nanos, LeadershipTerm term) {}

  private final List<Elected> elections = new ArrayList<>();

  /** A listener that records the replica's elections here. */
  ElectionListener listenerFor(String replica) {
    return new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current instanceof ElectionState.Leading) {
          record(new Elected(replica, System.nanoTime(), ((ElectionState.Leading) current).term()));
        }
      }
    };
  }

  private synchronized void record(Elected elected) {
    elections.add(elected);
    notifyAll();
  }

  /** Whether any replica was elected, so the Lease exists. */
  synchronized boolean anyElection() {
    return !elections.isEmpty();
  }

  /**
   * Waits for a replica other than {@code notThis} to be elected at or after {@code sinceNanos}.
   *
   * @return the first such election, or empty if none came within {@code timeout}
   */
  synchronized Optional<Elected> awaitElection(Optional<String> notThis, long sinceNanos, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      for (Elected e : elections) {
        if (e.nanos() - sinceNanos >= 0 && !notThis.equals(Optional.of(e.replica()))) {
          return Optional.of(e);
        }
      }
      long remaining = deadline - System.nanoTime();
      if (remaining <= 0) {
        return Optional.empty();
      }
      wait(Math.max(1, remaining / 1_000_000));
    }
  }
}
