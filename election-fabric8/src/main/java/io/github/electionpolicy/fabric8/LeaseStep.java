package io.github.electionpolicy.fabric8;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What {@link LeaseProtocol} returns for each input: the one action the driver takes next, and what happened
 * on the way there ({@link Signal}s for the runner and the log), as values. Nothing here does I/O.
 *
 * @param action what to do next
 * @param signals what the input led to, in order
 */
record LeaseStep(Action action, List<Signal> signals) {

  LeaseStep {
    signals = List.copyOf(signals);
  }

  /** The current monotonic time, and the wall-clock time written into Lease records. */
  record Moment(long nanos, Instant wall) {}

  /** What the driver does next. The driver has at most one request in flight, and answers it exactly once. */
  sealed interface Action {}

  /** Read the Lease; answer with {@link Answer.Found}, {@link Answer.Missing} or {@link Answer.Failed}. */
  record Read(long answerByNanos) implements Action {}

  /** Create the Lease with this record; answer with {@link Answer.Written} or {@link Answer.Failed}. */
  record Create(LeaseRecord record, long answerByNanos) implements Action {}

  /**
   * Replace the Lease's spec with this record, conditional on its resourceVersion; answer with
   * {@link Answer.Written} or {@link Answer.Failed}.
   */
  record Update(LeaseRecord record, long answerByNanos) implements Action {}

  /** Wait until this time, or until a watch event, a close or another input arrives. */
  record Await(long untilNanos) implements Action {}

  /**
   * Leadership was lost ({@link Signal.Lost}): stop the services, apply the loss policy, then call
   * {@link LeaseProtocol#afterLoss}. Nothing is sent until then.
   */
  record HandleLoss() implements Action {}

  /** The loop is over: nothing more will be sent. */
  record Finished() implements Action {}

  /** The answer to the request in flight. */
  sealed interface Answer {
    /** The read found the Lease. */
    record Found(LeaseRecord record) implements Answer {}

    /** The read found no Lease. */
    record Missing() implements Answer {}

    /** The write was accepted; the record as the server stored it, with its new resourceVersion. */
    record Written(LeaseRecord record) implements Answer {}

    /** The request failed. */
    record Failed(FailureKind kind, String failure) implements Answer {}
  }

  /** How a request failed, as far as the protocol cares. */
  enum FailureKind {
    /** HTTP 409: another write came first (a stale resourceVersion, or a create that lost a race). */
    CONFLICT,
    /** HTTP 404: the Lease does not exist (any more). */
    NOT_FOUND,
    /** Anything else: no answer in time, connection refused, 403, 5xx. */
    OTHER
  }

  /** Why leadership was lost. */
  enum LossCause {
    /** No renewal succeeded within the renew deadline. */
    RENEW_DEADLINE,
    /** A renewal succeeded, but only after the renew deadline had passed. */
    LATE_RENEWAL,
    /** The term lapsed on its own clock before the renewal was taken in. */
    TERM_LAPSED,
    /** The Lease was deleted. */
    DELETED,
    /** Another holder, or nobody, holds the Lease now. */
    TAKEN,
    /** Another process using this identity took the Lease with a term of its own. */
    SAME_IDENTITY,
    /** A service could not start, so the term was given up. */
    START_FAILED
  }

  /** Facts worth a log line, with the detail the line needs. */
  enum FactKind {
    /** A Lease call failed for the first time in a row (detail: the failure). */
    UNREACHABLE,
    /** Another Lease call failed in a row (detail: the failure). */
    STILL_UNREACHABLE,
    /** A call succeeded after failures. */
    REACHABLE_AGAIN,
    /** A renewal failed (detail: the failure). */
    RENEWAL_FAILED,
    /** The Lease is held under this identity by a term this process did not write (detail: the holder). */
    SAME_IDENTITY_WAITING,
    /** The holder's leaseDurationSeconds is longer than an hour; honoured all the same (detail: seconds). */
    LONG_LEASE_DURATION,
    /** leaseTransitions reached Integer.MAX_VALUE: no new term can get a larger fencing token. */
    TOKEN_EXHAUSTED,
    /** After an exhausted token, the Lease shows a lower count or is gone: counting restarts (detail: the next). */
    TOKEN_RESET,
    /** The Lease was released. */
    RELEASED,
    /** The Lease was handed over: a new term written for a named successor (detail: the successor). */
    HANDED_OVER,
    /** A hand-over to this process was taken in as its own term (detail: its leaseTransitions). */
    HANDED_OVER_HERE,
    /** A hand-over to this process, which closes or does not want it, is released (detail: its leaseTransitions). */
    HAND_OVER_DECLINED,
    /** The release failed (detail: the failure); the Lease expires instead. */
    RELEASE_FAILED,
    /** The Lease is left to expire (the services did not all stop cleanly, or the runner abandons it). */
    ABANDONED,
    /** The next attempt waits after a term given up (detail: the wait in milliseconds). */
    BACKING_OFF,
    /** Contending again after a loss. */
    CONTENDING_AGAIN
  }

  /** What happened while handling an input. */
  sealed interface Signal {}

  /** This process won a new term; its services may run until {@code validUntilNanos} unless renewed. */
  record Elected(LeaseRecord record, long validUntilNanos, Optional<String> previousHolder) implements Signal {}

  /**
   * A renewal succeeded: the term stays valid until {@code validUntilNanos}; the update took
   * {@code roundTripNanos} from when it was sent until its answer was taken in.
   */
  record Renewed(long validUntilNanos, long roundTripNanos) implements Signal {}

  /** The term is over; {@code holder} is who holds the Lease now, if known. */
  record Lost(LossCause cause, Optional<String> holder) implements Signal {}

  /** As a follower: the Lease is held by {@code holder}, or free. */
  record Following(Optional<String> holder) implements Signal {}

  /** A renewal failed; the leader keeps trying until its deadline. */
  record RenewFailed(String failure, long sinceLastRenewalNanos) implements Signal {}

  /** A fact for the log. */
  record Fact(FactKind kind, String detail) implements Signal {}
}
