package io.github.electionpolicy.springboot;

import io.github.electionpolicy.fabric8.ElectionListener;
import java.time.Clock;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Objects;

/**
 * The last renewals and renew failures of this replica, for the {@code election} endpoint: an
 * {@link ElectionListener} bean, so the {@link ElectionLifecycle} adds it to each runner it starts, and two
 * bounded rings of {@link #CAPACITY} entries each, so a run of failures never pushes the last successes out.
 * The history outlives a runner: after the context stops and starts again it goes on with the new runner's.
 *
 * <p>Thread-safe: the runner calls it on its listeners' thread, the endpoint reads it on a request's.
 */
final class RenewalHistory implements ElectionListener {

  /** How many renewals, and how many failures, are kept. */
  static final int CAPACITY = 10;

  /** The longest cause kept: a failure's message names the request and the server's answer, once. */
  static final int CAUSE_LENGTH = 200;

  private final Clock clock;
  private final Object lock = new Object();
  // Newest first. Guarded by lock.
  private final Deque<ElectionDescriptor.Renewal> renewals = new ArrayDeque<>(CAPACITY);
  private final Deque<ElectionDescriptor.RenewFailure> failures = new ArrayDeque<>(CAPACITY);

  RenewalHistory(Clock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  @Override
  public void renewed(Duration roundTrip) {
    ElectionDescriptor.Renewal renewal = new ElectionDescriptor.Renewal(now(),
        roundTrip.toMillis());
    synchronized (lock) {
      push(renewals, renewal);
    }
  }

  @Override
  public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
    ElectionDescriptor.RenewFailure failure = new ElectionDescriptor.RenewFailure(now(),
        sinceLastRenewal.toMillis(), describe(cause));
    synchronized (lock) {
      push(failures, failure);
    }
  }

  /** Milliseconds are enough: the round trips are in milliseconds too. */
  private String now() {
    return clock.instant().truncatedTo(ChronoUnit.MILLIS).toString();
  }

  /** The last renewals, newest first. */
  List<ElectionDescriptor.Renewal> renewals() {
    synchronized (lock) {
      return List.copyOf(renewals);
    }
  }

  /** The last renew failures, newest first. */
  List<ElectionDescriptor.RenewFailure> renewFailures() {
    synchronized (lock) {
      return List.copyOf(failures);
    }
  }

  private static <T> void push(Deque<T> ring, T entry) {
    if (ring.size() == CAPACITY) {
      ring.removeLast();
    }
    ring.addFirst(entry);
  }

  /**
   * The first line of the message (the class's name when there is none), cut to {@link #CAUSE_LENGTH}: what
   * failed, not a stack trace. The library's and fabric8's messages name the request and the server's answer,
   * never a credential.
   */
  static String describe(Throwable cause) {
    String message = cause.getMessage();
    String line = message == null || message.isBlank()
        ? cause.getClass().getSimpleName()
        : message.strip().lines().findFirst().orElseThrow();
    return line.length() <= CAUSE_LENGTH ? line : line.substring(0, CAUSE_LENGTH - 1) + "…";
  }

  @Override
  public String toString() {
    synchronized (lock) {
      return "RenewalHistory{" + renewals.size() + " renewals, " + failures.size() + " failures}";
    }
  }
}
