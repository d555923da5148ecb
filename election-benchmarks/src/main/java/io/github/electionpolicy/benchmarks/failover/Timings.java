package io.github.electionpolicy.benchmarks.failover;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * The three Lease timings every contender in a run is given. Immutable and thread-safe.
 *
 * @param name short name used on the command line and in the table, such as {@code fast}
 * @param leaseDuration how long a Lease stays valid after its last renewal
 * @param renewDeadline how long a leader keeps trying to renew before it gives up
 * @param retryPeriod how often contenders try to acquire or renew
 */
public record Timings(String name, Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {

  /** The Kubernetes defaults: 15 s / 10 s / 2 s. */
  public static final Timings DEFAULT =
      new Timings("default", Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2));

  /** Fast timings for a quick run: 2 s / 1.5 s / 0.2 s. */
  public static final Timings FAST =
      new Timings("fast", Duration.ofSeconds(2), Duration.ofMillis(1500), Duration.ofMillis(200));

  /**
   * Checks the values.
   *
   * @param name short name used on the command line and in the table
   * @param leaseDuration how long a Lease stays valid after its last renewal
   * @param renewDeadline how long a leader keeps trying to renew before it gives up
   * @param retryPeriod how often contenders try to acquire or renew
   * @throws IllegalArgumentException when a duration is not positive
   */
  public Timings {
    Objects.requireNonNull(name, "name");
    requirePositive("leaseDuration", leaseDuration);
    requirePositive("renewDeadline", renewDeadline);
    requirePositive("retryPeriod", retryPeriod);
  }

  /**
   * Finds the timings with this name.
   *
   * @param name {@code fast} or {@code default}, in any case
   * @return the timings
   * @throws IllegalArgumentException for any other name
   */
  public static Timings named(String name) {
    return switch (name.trim().toLowerCase(Locale.ROOT)) {
      case "fast" -> FAST;
      case "default" -> DEFAULT;
      default -> throw new IllegalArgumentException(
          "timings=" + name + " is not valid: accepted values are fast, default; fix: pass timings=fast,default");
    };
  }

  /**
   * The timings in the form used by the table, such as {@code fast (2 s / 1.5 s / 0.2 s)}.
   *
   * @return a one-line description
   */
  public String describe() {
    return name + " (lease " + seconds(leaseDuration) + " s / renew " + seconds(renewDeadline) + " s / retry "
        + seconds(retryPeriod) + " s)";
  }

  private static String seconds(Duration duration) {
    return Double.toString(duration.toMillis() / 1000.0).replaceAll("\\.0$", "");
  }

  private static void requirePositive(String setting, Duration value) {
    Objects.requireNonNull(value, setting);
    if (value.isZero() || value.isNegative()) {
      throw new IllegalArgumentException(
          setting + "=" + value + " is not valid: accepted values are positive durations; fix: pass a positive value");
    }
  }
}
