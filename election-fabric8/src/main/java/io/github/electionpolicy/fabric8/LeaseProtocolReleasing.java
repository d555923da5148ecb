package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseProtocol.Flaw;
import io.github.electionpolicy.fabric8.LeaseProtocol.Role;
import io.github.electionpolicy.fabric8.LeaseProtocolState.Pending;
import io.github.electionpolicy.fabric8.LeaseStep.Action;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import io.github.electionpolicy.fabric8.LeaseStep.LossCause;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import java.util.Optional;

/**
 * The release rules of {@link LeaseProtocol}: a leader lets its term go by writing an empty holder and
 * leaseDurationSeconds = 1, conditional on its last write; a conflict is re-read once and the release retried only
 * while the Lease still shows this very term and the renew deadline has not passed (past it, only if the Lease says
 * exactly what this replica wrote); afterwards the protocol
 * finishes, or, when the term was given up after a failed start, reports the loss. A close that finds the renew
 * deadline passed reads the Lease first, and releases it only if it shows this replica's own write
 * ({@link #checkBeforeRelease}).
 *
 * <p>Pure: static functions of the {@link LeaseProtocolState} and the current {@link Moment}; no thread, lock,
 * clock or logger. Not thread-safe: the protocol's one driver thread calls them.
 */
final class LeaseProtocolReleasing {

  private LeaseProtocolReleasing() {}

  static Action release(LeaseProtocolState s, Moment now) {
    long t = now.nanos();
    s.pending = Pending.RELEASE;
    s.pendingSentNanos = t;
    LeaseRecord released = handingOver(s) && t - (s.lastRenewSentNanos + s.renewDeadlineNanos) < 0
        ? new LeaseRecord(s.successor, s.leaseDurationSeconds, LeaseProtocolState.wall(now),
            LeaseProtocolState.wall(now), s.mine.transitions() + 1, s.mine.resourceVersion(), s.successorProof)
        : new LeaseRecord(null, 1, LeaseProtocolState.wall(now), LeaseProtocolState.wall(now),
            s.mine.leaseTransitions(), s.mine.resourceVersion());
    return new LeaseStep.Update(released, t + s.requestTimeoutNanos);
  }

  /**
   * Whether this release hands the Lease over to a named successor: a clean close's release (its services stopped,
   * before the renew deadline, which the caller checks again at the write: a release retried after a conflict's re-read
   * past it stays plain), given a successor, while the token can still grow. The hand-over is a new term, so it
   * counts a transition, as a take would.
   */
  private static boolean handingOver(LeaseProtocolState s) {
    return s.successor != null && s.cleanRelease && !s.relinquishing && s.role == Role.LEADING
        && s.mine.transitions() < Integer.MAX_VALUE;
  }

  static Action releaseAnswered(LeaseProtocolState s, Moment now, Answer answer) {
    if (answer instanceof Answer.Written written) {
      s.succeeded(s.pendingSentNanos);
      s.observe(written.record(), now.nanos());
      if (written.record().holder() != null) {
        // A hand-over: the Lease is the successor's now, not released, so nothing may delete it.
        s.fact(FactKind.HANDED_OVER, written.record().holder());
        return afterRelease(s);
      }
      s.fact(FactKind.RELEASED, "");
      if (s.cleanRelease && !s.relinquishing && s.role == Role.LEADING) {
        s.cleanlyReleased = written.record();
      }
      return afterRelease(s);
    }
    Answer.Failed failed = (Answer.Failed) answer;
    if (failed.kind() == FailureKind.CONFLICT && !s.releaseRetried) {
      s.releaseRetried = true;
      s.succeeded(s.pendingSentNanos);
      s.pending = Pending.RELEASE_REREAD;
      s.pendingSentNanos = now.nanos();
      return new LeaseStep.Read(now.nanos() + s.requestTimeoutNanos);
    }
    s.fact(FactKind.RELEASE_FAILED, failed.failure());
    return afterRelease(s);
  }

  static Action releaseRereadAnswered(LeaseProtocolState s, Moment now, Answer answer) {
    boolean valid = now.nanos() - (s.lastRenewSentNanos + s.renewDeadlineNanos) < 0;
    // While the term is valid, any record of this very term is this replica's to release; once it has ended, only
    // one that says exactly what this replica wrote (a renewal that landed unheard, say).
    if (answer instanceof Answer.Found found && found.record().heldBy(s.identity) && found.record().sameTerm(s.mine)
        && (valid || s.flaw != Flaw.NO_RELEASE_AFTER_DEADLINE && s.showsOwnWrite(found.record()))) {
      s.succeeded(s.pendingSentNanos);
      s.mine = found.record();
      return release(s, now);
    }
    if (answer instanceof Answer.Failed failed) {
      s.fact(FactKind.RELEASE_FAILED, failed.failure());
    }
    return afterRelease(s);
  }

  /**
   * The term ended at its renew deadline and the services stopped: the Lease may show this replica's last known
   * write, one of its renewals in doubt (sent, never answered in time, applied all the same), or someone else's
   * write. A read tells; the release follows only if the Lease says exactly what this replica wrote or attempted,
   * as a compare-and-set on the read's resourceVersion, so that a write made since, by anyone, makes it change
   * nothing.
   */
  static Action checkBeforeRelease(LeaseProtocolState s, Moment now) {
    long t = now.nanos();
    s.pending = Pending.RELEASE_CHECK;
    s.pendingSentNanos = t;
    return new LeaseStep.Read(t + s.requestTimeoutNanos);
  }

  static Action releaseCheckAnswered(LeaseProtocolState s, Moment now, Answer answer) {
    if (answer instanceof Answer.Failed failed) {
      s.fact(FactKind.RELEASE_FAILED, failed.failure());
    } else {
      s.succeeded(s.pendingSentNanos);
      LeaseRecord current = answer instanceof Answer.Found found ? found.record() : null;
      s.observe(current, now.nanos());
      if (s.showsOwnWrite(current)) {
        s.writeKnown();
        s.mine = current;
        s.lastWritten = current;
        s.releaseRetried = true; // the renew deadline has passed: a conflict is not retried
        return release(s, now);
      }
    }
    s.writeKnown();
    s.role = Role.FINISHED;
    return new LeaseStep.Finished();
  }

  private static Action afterRelease(LeaseProtocolState s) {
    if (s.relinquishing) {
      return LeaseProtocolRenewing.lost(s, LossCause.START_FAILED, Optional.empty());
    }
    s.role = Role.FINISHED;
    return new LeaseStep.Finished();
  }
}
