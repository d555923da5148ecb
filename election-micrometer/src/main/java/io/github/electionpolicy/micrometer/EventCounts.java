package io.github.electionpolicy.micrometer;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the runner's listener events add up to: counts kept here, so a registry bound late still sees every
 * event since the start (its counters read these), and the renewal timers of every bound registry.
 * Called on the runner's listener thread; read from any.
 */
final class EventCounts implements ElectionListener {

  private final AtomicLong transitions = new AtomicLong();
  private final AtomicLong renewFailures = new AtomicLong();
  private final List<Timer> renewTimers = new CopyOnWriteArrayList<>();

  @Override
  public void stateChanged(ElectionState previous, ElectionState current) {
    if (current.kind() == ElectionState.Kind.LEADING) {
      transitions.incrementAndGet();
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

  /**
   * Renewals from now on are recorded in {@code timer} too (a timer sees only what comes after it). Called under
   * the binder's lock. By identity: Micrometer's meters are equal by name and tags, so the timers of two
   * registries are equal.
   */
  void recordRenewalsIn(Timer timer) {
    if (renewTimers.stream().noneMatch(known -> known == timer)) {
      renewTimers.add(timer);
    }
  }

  @Override
  public String toString() {
    return "ElectionMetrics' listener";
  }
}
