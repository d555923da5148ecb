package io.github.electionpolicy.fabric8;

import java.time.Instant;

/**
 * One simulated process's clocks, read at a point of simulated (true) time: a monotonic clock that starts at an
 * arbitrary origin (near {@link Long#MAX_VALUE} in some schedules, so every comparison must survive wrap-around)
 * and runs at {@code 1 + driftPpm / 10^6} of true time, and a wall clock skewed by a fixed offset.
 *
 * <p>The monotonic clock keeps counting while the process is paused, as CLOCK_MONOTONIC does through a
 * stop-the-world GC or a SIGSTOP. A clock that stops during a VM suspend breaks the drift bound and is outside
 * what the simulation claims.
 *
 * <p>Immutable.
 */
final class SimClock {

  /** The wall-clock time at simulated time 0. */
  static final Instant EPOCH = Instant.parse("2026-01-01T00:00:00Z");

  private final long startTrueNanos;
  private final long origin;
  private final long driftPpm;
  private final long wallOffsetNanos;

  SimClock(long startTrueNanos, long origin, long driftPpm, long wallOffsetNanos) {
    this.startTrueNanos = startTrueNanos;
    this.origin = origin;
    this.driftPpm = driftPpm;
    this.wallOffsetNanos = wallOffsetNanos;
  }

  /** The monotonic reading at true time {@code t}. */
  long mono(long t) {
    long e = t - startTrueNanos;
    return origin + e + Math.floorDiv(e * driftPpm, 1_000_000L);
  }

  /** The first true time at which the monotonic clock reads at least {@code target} (never before {@code now}). */
  long trueTimeOf(long target, long now) {
    long ahead = target - mono(now);
    if (ahead <= 0) {
      return now;
    }
    long t = now + (long) Math.ceil(ahead / (1 + driftPpm / 1e6));
    while (mono(t) - target < 0) {
      t++;
    }
    while (t > now && mono(t - 1) - target >= 0) {
      t--;
    }
    return t;
  }

  Instant wall(long t) {
    long n = t + wallOffsetNanos;
    return EPOCH.plusSeconds(Math.floorDiv(n, 1_000_000_000L)).plusNanos(Math.floorMod(n, 1_000_000_000L));
  }
}
