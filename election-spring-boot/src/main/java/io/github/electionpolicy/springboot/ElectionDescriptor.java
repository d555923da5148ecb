package io.github.electionpolicy.springboot;

import java.util.List;
import java.util.Objects;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * What the {@code election} Actuator endpoint ({@link ElectionEndpoint}) answers: the runner's state, the
 * holder of the Lease as this replica last saw it, this replica's identity, the term and its fencing token, the
 * Lease, the decision with its reasons, and the last renewals and renew failures. Strings, numbers and lists
 * only (times as ISO-8601 instants, durations in milliseconds), so Spring Boot 4's Jackson 3 and Spring Boot
 * 3.5's Jackson 2 write the same JSON; Actuator's own JSON mapper writes it (an {@link OperationResponseBody}),
 * so the application's {@code spring.jackson.*} settings do not rename its fields, and it leaves out a
 * component that is {@code null}.
 *
 * <pre>{@code
 * ElectionDescriptor election = endpoint.election();
 * if (election.term() != null) {
 *   log.info("leading with fencing token {}", election.term().leaseTransitions());
 * }
 * }</pre>
 *
 * <p>An immutable record of immutable records (its lists are unmodifiable copies); thread-safe.
 *
 * @param state the runner's {@link io.github.electionpolicy.fabric8.ElectionState.Kind}, e.g. {@code LEADING}
 * @param identity this replica's identity, written as holder when it leads; {@code null} before the runner
 *     started unless {@code election.identity} is set
 * @param holder who holds the Lease: this replica's identity while leading, the leader last seen while
 *     following; {@code null} when no holder is known, while starting, stopped or running unelected
 * @param term the term the services run under: while leading, and while running unelected (not elected);
 *     otherwise {@code null}
 * @param lease the Lease contended for; {@code null} when the decision is to run unelected
 * @param decision the decision the runner acts on
 * @param renewals the last successful renewals of this replica, newest first, at most 10
 * @param renewFailures the last failed renewals of this replica, newest first, at most 10
 */
public record ElectionDescriptor(String state, String identity, String holder, Term term, Lease lease,
    Decision decision, List<Renewal> renewals, List<RenewFailure> renewFailures) implements OperationResponseBody {

  /**
   * Checks the components that are always present and copies the lists.
   *
   * @param state the state's kind
   * @param identity this replica's identity, or {@code null}
   * @param holder the holder, or {@code null}
   * @param term the term, or {@code null}
   * @param lease the Lease, or {@code null}
   * @param decision the decision
   * @param renewals the last renewals, newest first
   * @param renewFailures the last renew failures, newest first
   */
  public ElectionDescriptor {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(decision, "decision");
    renewals = List.copyOf(renewals);
    renewFailures = List.copyOf(renewFailures);
  }

  /**
   * A term: one uninterrupted stretch of leadership, or of running unelected. Immutable; thread-safe.
   *
   * <pre>{@code
   * long fencingToken = election.term().leaseTransitions();
   * }</pre>
   *
   * @param leaseTransitions the Lease's {@code leaseTransitions} written when the term began: the fencing token,
   *     one higher with each new term; 0 when not elected
   * @param acquireTime when the Lease was acquired (the start when not elected), an ISO-8601 instant
   * @param valid whether the term's work may still go on ({@link
   *     io.github.electionpolicy.fabric8.LeadershipTerm#isValid()})
   * @param elected whether the term comes from winning the Lease rather than from running unelected
   */
  public record Term(long leaseTransitions, String acquireTime, boolean valid, boolean elected) {
    /**
     * Checks the acquire time is present.
     *
     * @param leaseTransitions the fencing token
     * @param acquireTime the acquire time
     * @param valid whether the term is valid
     * @param elected whether the term is elected
     */
    public Term {
      Objects.requireNonNull(acquireTime, "acquireTime");
    }
  }

  /**
   * The Lease this replica contends for, and the timings it contends with. Immutable; thread-safe.
   *
   * <pre>{@code
   * String lease = election.lease().namespace() + "/" + election.lease().name();
   * }</pre>
   *
   * @param namespace the Lease's namespace; {@code null} before the runner resolved it when
   *     {@code election.namespace} is not set
   * @param name the Lease's name, {@code election.lease-name}
   * @param leaseDurationMillis {@code election.lease-duration}, in milliseconds
   * @param renewDeadlineMillis {@code election.renew-deadline}, in milliseconds
   * @param retryPeriodMillis {@code election.retry-period}, in milliseconds
   */
  public record Lease(String namespace, String name, long leaseDurationMillis, long renewDeadlineMillis,
      long retryPeriodMillis) {
    /**
     * Checks the name is present.
     *
     * @param namespace the namespace, or {@code null}
     * @param name the name
     * @param leaseDurationMillis the lease duration
     * @param renewDeadlineMillis the renew deadline
     * @param retryPeriodMillis the retry period
     */
    public Lease {
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * The decision the runner acts on, as the library logged it at start-up. Immutable; thread-safe.
   *
   * <pre>{@code
   * boolean contends = election.decision().outcome().equals("CONTEND");
   * }</pre>
   *
   * @param outcome the {@link io.github.electionpolicy.ElectionDecision.Outcome}, e.g. {@code CONTEND}
   * @param reasons every {@link io.github.electionpolicy.ElectionDecision.Reason} that holds, in the enum's order
   * @param summary the decision's one line for people ({@link io.github.electionpolicy.ElectionDecision#summary()})
   * @param warnings warnings about the inputs, such as a half-set pod environment; usually empty
   */
  public record Decision(String outcome, List<String> reasons, String summary, List<String> warnings) {
    /**
     * Checks the components are present and copies the lists.
     *
     * @param outcome the outcome
     * @param reasons the reasons
     * @param summary the summary
     * @param warnings the warnings
     */
    public Decision {
      Objects.requireNonNull(outcome, "outcome");
      Objects.requireNonNull(summary, "summary");
      reasons = List.copyOf(reasons);
      warnings = List.copyOf(warnings);
    }
  }

  /**
   * A successful renewal of the Lease by this replica. Immutable; thread-safe.
   *
   * <pre>{@code
   * long slowest = election.renewals().stream().mapToLong(Renewal::roundTripMillis).max().orElse(0);
   * }</pre>
   *
   * @param time when this replica heard of the renewal (an ISO-8601 instant of its wall clock, to the
   *     millisecond), just after the answer came
   * @param roundTripMillis how long the renewal's update took, sent to answered, in milliseconds
   */
  public record Renewal(String time, long roundTripMillis) {
    /**
     * Checks the time is present.
     *
     * @param time when the renewal was heard of
     * @param roundTripMillis the round trip
     */
    public Renewal {
      Objects.requireNonNull(time, "time");
    }
  }

  /**
   * A renewal of the Lease by this replica that failed; the leader keeps trying until its renew deadline.
   * Immutable; thread-safe.
   *
   * <pre>{@code
   * election.renewFailures().forEach(failure -> log.warn("{}: {}", failure.time(), failure.cause()));
   * }</pre>
   *
   * @param time when this replica heard of the failure, an ISO-8601 instant of its wall clock
   * @param sinceLastRenewalMillis how long since the last successful renewal was sent, in milliseconds
   * @param cause what failed, the first line of the failure's message (an HTTP error, a timeout, a conflict),
   *     at most 200 characters
   */
  public record RenewFailure(String time, long sinceLastRenewalMillis, String cause) {
    /**
     * Checks the components are present.
     *
     * @param time when the failure was heard of
     * @param sinceLastRenewalMillis time since the last successful renewal
     * @param cause what failed
     */
    public RenewFailure {
      Objects.requireNonNull(time, "time");
      Objects.requireNonNull(cause, "cause");
    }
  }
}
