package io.github.electionpolicy.micrometer;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * What the runner's listener events add up to: counts kept here, so a registry bound late still sees every
 * event since the start (its counters read these), the renewal timers of every bound registry, and whether
 * the runner has stopped. Called on the runner's listener thread; read from any.
 */
final class EventCounts implements ElectionListener {

  private final AtomicLong transitions = new AtomicLong();
  private final AtomicLong renewFailures = new AtomicLong();
  private final List<Timer> renewTimers = new CopyOnWriteArrayList<>();
  private final Consumer<EventCounts> onStopped;
  private volatile boolean stopped;

  /** Counts that tell {@code onStopped}, on the listener thread, once the runner reported STOPPED. */
  EventCounts(Consumer<EventCounts> onStopped) {
    this.onStopped = onStopped;
  }

  @Override
  public void stateChanged(ElectionState previous, ElectionState current) {
    if (current.kind() == ElectionState.Kind.LEADING) {
      transitions.incrementAndGet();
    } else if (current.kind() == ElectionState.Kind.STOPPED) {
      stopped = true;
      onStopped.accept(this);
    }
  }

  @Override
  public void renewed(Duration roundTrip) {
    for (Timer timer : renewTimers) {
      timer.record(roundTrip);
    }
  }

  @Override
  public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
    renewFailures.incrementAndGet();
  }

  long transitions() {
    return transitions.get();
  }

  long renewFailures() {
    return renewFailures.get();
  }

  /** Whether the runner has reported STOPPED (the last event it reports). */
  boolean stopped() {
    return stopped;
  }

  /**
   * Renewals from now on are recorded in {@code timer} too (a timer sees only what comes after it). By
   * identity: Micrometer's meters are equal by name and tags, so the timers of two registries are equal.
   */
  void recordRenewalsIn(Timer timer) {
    if (renewTimers.stream().noneMatch(known -> known == timer)) {
      renewTimers.add(timer);
    }
  }

  /** The timer was removed from its registry: renewals are no longer recorded in it. */
  void stopRecordingIn(Timer timer) {
    renewTimers.removeIf(known -> known == timer);
  }

  @Override
  public String toString() {
    return "ElectionMetrics' listener";
  }
}
