package io.github.electionpolicy.testkit;

import java.util.Objects;
import java.util.Optional;

/**
 * What a controller's start-up path actually did, as reported by an {@link ElectionWiringContract}: whether
 * it contended for the leader Lease, whether it started its reconcilers without the Lease, the summary it
 * logged, or the exception it failed with.
 *
 * <p>The plain cases have factories; {@link #of(boolean, boolean)} reports what a recording of the
 * controller's ports saw, which is how a start-up that does both (a reconciler started before the decision)
 * or neither is caught:
 *
 * <pre>{@code
 * return ObservedStartup.of(leasePort.contended(), reconcilers.startedWithoutLease())
 *     .withLoggedSummary(decision.summary());
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class ObservedStartup {

  private final boolean contendedForLease;
  private final boolean startedReconcilersUnelected;
  private final String loggedSummary;
  private final Throwable failure;

  private ObservedStartup(
      boolean contendedForLease, boolean startedReconcilersUnelected, String loggedSummary, Throwable failure) {
    this.contendedForLease = contendedForLease;
    this.startedReconcilersUnelected = startedReconcilersUnelected;
    this.loggedSummary = loggedSummary;
    this.failure = failure;
  }

  /**
   * The controller contended for the leader Lease and started no reconciler without it.
   *
   * @return the observation
   */
  public static ObservedStartup contended() {
    return new ObservedStartup(true, false, null, null);
  }

  /**
   * The controller started its reconcilers without leader election and did not contend.
   *
   * @return the observation
   */
  public static ObservedStartup ranUnelected() {
    return new ObservedStartup(false, true, null, null);
  }

  /**
   * The controller reports both facts as recorded, e.g. by fakes of its Lease and reconciler ports.
   *
   * @param contendedForLease whether the start-up contended for (or acquired) the leader Lease
   * @param startedReconcilersUnelected whether it started reconcilers without holding the Lease
   * @return the observation
   */
  public static ObservedStartup of(boolean contendedForLease, boolean startedReconcilersUnelected) {
    return new ObservedStartup(contendedForLease, startedReconcilersUnelected, null, null);
  }

  /**
   * The controller's start-up failed with an exception and started nothing. {@link ElectionWiringContract}
   * also reports an exception thrown by {@link ElectionWiringContract#startUp} this way.
   *
   * @param failure what the start-up failed with
   * @return the observation
   */
  public static ObservedStartup failedToStart(Throwable failure) {
    return new ObservedStartup(false, false, null, Objects.requireNonNull(failure, "failure"));
  }

  /**
   * Returns the same observation with the decision summary the controller logged. When present, the
   * contract checks that it contains the library's summary for the scenario, so that a controller that logs
   * a different decision from the one it acts on is caught.
   *
   * @param summary the logged line; when the controller does not expose it, do not call this method
   * @return a new observation
   * @throws NullPointerException if {@code summary} is {@code null}
   */
  public ObservedStartup withLoggedSummary(String summary) {
    Objects.requireNonNull(summary, "summary: leave withLoggedSummary(...) out when the line is not known");
    return new ObservedStartup(contendedForLease, startedReconcilersUnelected, summary, failure);
  }

  /**
   * Tells whether the start-up contended for the leader Lease.
   *
   * @return {@code true} if it did
   */
  public boolean contendedForLease() {
    return contendedForLease;
  }

  /**
   * Tells whether the start-up started reconcilers without holding the Lease.
   *
   * @return {@code true} if it did
   */
  public boolean startedReconcilersUnelected() {
    return startedReconcilersUnelected;
  }

  /**
   * Returns the decision summary the controller logged, if it exposed one.
   *
   * @return the logged summary, or empty
   */
  public Optional<String> loggedSummary() {
    return Optional.ofNullable(loggedSummary);
  }

  /**
   * Returns what the start-up failed with, if it failed.
   *
   * @return the failure, or empty when the start-up completed
   */
  public Optional<Throwable> failure() {
    return Optional.ofNullable(failure);
  }

  /**
   * Describes the observation in words for a failure message, e.g. {@code contended for the Lease, started
   * reconcilers without the Lease}.
   *
   * @return a one-line description
   */
  public String describe() {
    if (failure != null) {
      return "start-up failed with " + failure;
    }
    if (contendedForLease && startedReconcilersUnelected) {
      return "contended for the Lease AND started reconcilers without the Lease";
    }
    if (contendedForLease) {
      return "contended for the Lease and started no reconciler without it";
    }
    if (startedReconcilersUnelected) {
      return "started reconcilers without leader election and did not contend";
    }
    return "neither contended for the Lease nor started reconcilers";
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof ObservedStartup that
        && contendedForLease == that.contendedForLease
        && startedReconcilersUnelected == that.startedReconcilersUnelected
        && Objects.equals(loggedSummary, that.loggedSummary)
        && Objects.equals(failure, that.failure);
  }

  @Override
  public int hashCode() {
    return Objects.hash(contendedForLease, startedReconcilersUnelected, loggedSummary, failure);
  }

  @Override
  public String toString() {
    return "ObservedStartup[" + describe() + loggedSummary().map(s -> ", logged " + Render.quote(s)).orElse("")
        + "]";
  }
}
