package io.github.electionpolicy.benchmarks.failover;

import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * What one round measured. Immutable and thread-safe. All durations are in nanoseconds of
 * {@link System#nanoTime()}.
 *
 * @param contender the column, such as {@code stock}
 * @param timings the Lease timings of the round
 * @param scenario graceful close or crash of the leader
 * @param handOverNanos from the harness closing or crashing the leader to another replica's reconcilers
 *     starting
 * @param sinceLastRenewNanos for a crash, from the server applying the old leader's last write (on a real
 *     server: a watch delivering it) to another replica's reconcilers starting; empty for a graceful round
 * @param acquireSinceLastRenewNanos for a crash, from the server applying the old leader's last write to the
 *     server applying the new leader's first write (on a real server: both as a watch delivered them); empty for
 *     a graceful round
 * @param leaderRequestsPerMinute Lease requests the server counted from the leader, per minute, while all
 *     replicas ran; empty where requests cannot be counted (a real server behind TLS)
 * @param followerRequestsPerMinute Lease requests the server counted per follower (mean over the followers),
 *     per minute, in the same window; empty where requests cannot be counted
 */
public record RoundResult(
    String contender,
    Timings timings,
    Scenario scenario,
    long handOverNanos,
    OptionalLong sinceLastRenewNanos,
    OptionalLong acquireSinceLastRenewNanos,
    OptionalDouble leaderRequestsPerMinute,
    OptionalDouble followerRequestsPerMinute) {

  /**
   * Whether the new leader took the Lease, or started its reconcilers, less than one lease duration after
   * the crashed leader's last successful renewal: a safety violation. Always false for a graceful round.
   *
   * @return true when the Lease was taken before it expired
   */
  public boolean violatesLeaseDuration() {
    long lease = timings.leaseDuration().toNanos();
    return (sinceLastRenewNanos.isPresent() && sinceLastRenewNanos.getAsLong() < lease)
        || (acquireSinceLastRenewNanos.isPresent() && acquireSinceLastRenewNanos.getAsLong() < lease);
  }
}
