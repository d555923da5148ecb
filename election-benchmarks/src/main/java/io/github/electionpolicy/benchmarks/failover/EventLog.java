package io.github.electionpolicy.benchmarks.failover;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * The one log that the harness, the contenders' callbacks and the mock API server all write to. Each event
 * is stamped with {@link System#nanoTime()} while the log's lock is held, so the log is ordered by time and
 * every measurement is a difference of two stamps taken on the same monotonic clock. Thread-safe.
 */
public final class EventLog {

  private final List<BenchEvent> events = new ArrayList<>();

  /** Creates an empty log. */
  public EventLog() {}

  /**
   * Appends an event stamped now.
   *
   * @param kind what happened
   * @param replica identity of the replica it concerns
   * @param detail free text
   * @return the event as recorded
   */
  public synchronized BenchEvent record(EventKind kind, String replica, String detail) {
    BenchEvent event = new BenchEvent(System.nanoTime(), kind, replica, detail);
    events.add(event);
    notifyAll();
    return event;
  }

  /**
   * The number of events so far; pass it to {@link #awaitFirst} to look only at what happens next.
   *
   * @return the current size
   */
  public synchronized int size() {
    return events.size();
  }

  /**
   * A copy of the events recorded so far.
   *
   * @return the events in order of time
   */
  public synchronized List<BenchEvent> snapshot() {
    return List.copyOf(events);
  }

  /**
   * Waits for the first event at or after index {@code from} that matches.
   *
   * @param from index to start looking at
   * @param matcher which event
   * @param timeout how long to wait
   * @return the event
   * @throws TimeoutException when none arrived in time
   * @throws InterruptedException when interrupted while waiting
   */
  public synchronized BenchEvent awaitFirst(int from, Predicate<BenchEvent> matcher, Duration timeout)
      throws TimeoutException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    int next = from;
    while (true) {
      for (; next < events.size(); next++) {
        if (matcher.test(events.get(next))) {
          return events.get(next);
        }
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new TimeoutException("no matching event within " + timeout);
      }
      wait(Math.max(1, left / 1_000_000));
    }
  }

  /**
   * The last event before index {@code before} that matches.
   *
   * @param before index to look below
   * @param matcher which event
   * @return the event, or empty when none matches
   */
  public synchronized Optional<BenchEvent> findLast(int before, Predicate<BenchEvent> matcher) {
    for (int i = Math.min(before, events.size()) - 1; i >= 0; i--) {
      if (matcher.test(events.get(i))) {
        return Optional.of(events.get(i));
      }
    }
    return Optional.empty();
  }

  /**
   * The first event at or after index {@code from} that matches.
   *
   * @param from index to start looking at
   * @param matcher which event
   * @return the event, or empty when none matches
   */
  public synchronized Optional<BenchEvent> findFirst(int from, Predicate<BenchEvent> matcher) {
    for (int i = from; i < events.size(); i++) {
      if (matcher.test(events.get(i))) {
        return Optional.of(events.get(i));
      }
    }
    return Optional.empty();
  }

  /**
   * Counts the events that match and were stamped in {@code [fromNanos, toNanos)}.
   *
   * @param fromNanos start of the window, inclusive
   * @param toNanos end of the window, exclusive
   * @param matcher which events
   * @return how many
   */
  public synchronized long count(long fromNanos, long toNanos, Predicate<BenchEvent> matcher) {
    return events.stream()
        .filter(e -> e.nanos() - fromNanos >= 0 && e.nanos() - toNanos < 0)
        .filter(matcher)
        .count();
  }
}
