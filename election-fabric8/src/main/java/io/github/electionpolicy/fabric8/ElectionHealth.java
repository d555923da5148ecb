package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A snapshot of a runner's health, for Kubernetes readiness and liveness probes.
 *
 * <ul>
 *   <li><b>ready</b>: running unelected and started (in every {@link Readiness} mode); or contending,
 *       {@code FOLLOWING} or {@code LEADING} (never {@code STARTING} or {@code STOPPED}), and the last
 *       successful Lease call was sent within the renew deadline (dated when sent, like the leader's own
 *       deadline, so a leader that lost at its deadline is no longer ready); a follower whose watch is open,
 *       which reads only once per lease duration, within the lease duration plus one request timeout. Under
 *       {@link Readiness#LEADER_ONLY} only a {@code LEADING} runner can be ready.
 *   <li><b>live</b>: true when running unelected; when contending, false once no Lease call has succeeded
 *       for longer than {@link LeaseSettings#healthBudget()}, or than the readiness window if that is longer
 *       (a watching follower reads only once per lease duration) (counted from start before the first success,
 *       so a runner that stays {@code STARTING} turns not live after the budget), so the kubelet restarts a
 *       process that is cut off from the API server for good.
 * </ul>
 *
 * <table>
 *   <caption>Probes by state (contending, in touch with the API server)</caption>
 *   <tr><th>state</th><th>ready ({@code CONNECTED})</th><th>ready ({@code LEADER_ONLY})</th><th>live</th></tr>
 *   <tr><td>{@code STARTING}</td><td>no</td><td>no</td><td>yes, within the health budget from start</td></tr>
 *   <tr><td>{@code FOLLOWING}</td><td>yes</td><td>no</td><td>yes</td></tr>
 *   <tr><td>{@code LEADING}</td><td>yes</td><td>yes</td><td>yes</td></tr>
 *   <tr><td>{@code STOPPED}</td><td>no</td><td>no</td><td>until the health budget has passed</td></tr>
 * </table>
 *
 * <pre>{@code
 * server.createContext("/readyz", exchange -> respond(exchange, runner.health().ready()));
 * server.createContext("/livez", exchange -> respond(exchange, runner.health().live()));
 * }</pre>
 *
 * <p>An immutable record; thread-safe.
 *
 * @param ready whether the process should receive traffic
 * @param live whether the process is healthy enough not to be restarted
 * @param state the state when the snapshot was taken
 * @param sinceLastLeaseSuccess time since the last successful Lease call was sent; empty when unelected or before the
 *     first success
 */
public record ElectionHealth(
    boolean ready, boolean live, ElectionState state, Optional<Duration> sinceLastLeaseSuccess) {

  /**
   * Checks the components are present.
   *
   * @param ready whether the process should receive traffic
   * @param live whether the process is healthy enough not to be restarted
   * @param state the state when the snapshot was taken
   * @param sinceLastLeaseSuccess time since the last successful Lease call
   */
  public ElectionHealth {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(sinceLastLeaseSuccess, "sinceLastLeaseSuccess");
  }
}
