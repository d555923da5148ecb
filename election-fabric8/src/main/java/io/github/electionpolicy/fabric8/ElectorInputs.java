package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import java.time.Clock;

/**
 * What the runner asked of a {@link LeaseElector} that its {@link LeaseProtocol} has not taken in yet: to give up a
 * term, to finish, to close. The elector hands them over at its next wait, one at a time, in the order the runner
 * relies on ({@link #next}): a give-up of the current term first, then the finish, then the close.
 *
 * <p>Not thread-safe: used on the runner's loop only, as its elector is.
 */
final class ElectorInputs {

  private boolean closing;
  private boolean closeDelivered;
  private Boolean finishRelease;
  private boolean finishDelivered;
  private Boolean relinquishRelease;
  private LeadershipTerm relinquishTerm;

  /** Stops acquiring. */
  void close() {
    closing = true;
  }

  /** Whether the runner asked to close or to finish. */
  boolean closing() {
    return closing;
  }

  /**
   * The runner asks to end: a leader releases the Lease ({@code release}) or leaves it to expire. The first finish
   * asked for counts.
   *
   * @return whether a leader releases, by that first finish
   */
  boolean finish(boolean release) {
    closing = true;
    if (finishRelease == null) {
      finishRelease = release;
    }
    return finishRelease;
  }

  /** Gives {@code failed} up: taken in only if it is still the term when the protocol gets it. */
  void relinquish(LeadershipTerm failed, boolean release) {
    relinquishTerm = failed;
    relinquishRelease = release;
  }

  /** The term was lost: a give-up of it is moot, and one of a later term cannot exist yet. */
  void lost() {
    relinquishRelease = null;
    relinquishTerm = null;
  }

  /**
   * Takes the finish in, if one was asked for and not yet taken in (it takes the close in with it).
   *
   * @return whether a leader releases; null if there is no finish to take in
   */
  Boolean takeFinish() {
    if (finishRelease == null || finishDelivered) {
      return null;
    }
    finishDelivered = true;
    closeDelivered = true;
    return finishRelease;
  }

  /**
   * The protocol's step for the first input not yet taken in, or null if none is waiting. A give-up of a term that
   * is no longer {@code term} is dropped.
   */
  LeaseStep next(LeaseProtocol protocol, LeadershipTerm term, Ticker ticker, Clock clock) {
    if (relinquishRelease != null) {
      boolean release = relinquishRelease;
      boolean current = relinquishTerm == term && term != null;
      relinquishRelease = null;
      relinquishTerm = null;
      if (current) {
        return protocol.relinquish(new Moment(ticker.read(), clock.instant()), release);
      }
    }
    Boolean release = takeFinish();
    if (release != null) {
      return protocol.finish(new Moment(ticker.read(), clock.instant()), release);
    }
    if (closing && !closeDelivered) {
      closeDelivered = true;
      return protocol.close(new Moment(ticker.read(), clock.instant()));
    }
    return null;
  }
}
