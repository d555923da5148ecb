package io.github.electionpolicy.fabric8;

import java.time.Duration;

/** Formats durations the way settings messages and logs show them: {@code 15s}, {@code 1.5s}, {@code 200ms}. */
final class Durations {

  /** The longest wait worked with, about 146 years: a longer one ("forever") would overflow the arithmetic. */
  private static final long LONGEST_NANOS = 1L << 62;

  /** {@code duration} in nanoseconds, capped so that adding it to a {@link System#nanoTime()} cannot overflow. */
  static long cappedNanos(Duration duration) {
    return duration.compareTo(Duration.ofNanos(LONGEST_NANOS)) > 0 ? LONGEST_NANOS : Math.max(0, duration.toNanos());
  }

  private Durations() {}

  static String format(Duration duration) {
    if (duration == null) {
      return "<missing>";
    }
    if (duration.isNegative() || duration.isZero()) {
      return duration.toString();
    }
    if (duration.getSeconds() > 1_000_000_000L) {
      return duration.toString();
    }
    long millis = duration.toMillis();
    if (duration.getNano() % 1_000_000 != 0) {
      return duration.toString();
    }
    if (millis < 1000) {
      return millis + "ms";
    }
    if (millis % 1000 == 0) {
      return millis / 1000 + "s";
    }
    return String.format(java.util.Locale.ROOT, "%.3f", millis / 1000.0).replaceAll("0+$", "") + "s";
  }

  /** For logs: to the millisecond, so measured durations read like settings. */
  static String approx(Duration duration) {
    return format(duration.truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
  }

  /** True when {@code a} is longer than {@code factor} times {@code b}, with the factor given in tenths. */
  static boolean longerThanTenthsOf(Duration a, Duration b, int tenths) {
    return a.multipliedBy(10).compareTo(b.multipliedBy(tenths)) > 0;
  }
}
