package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseProtocol.Flaw;
import io.github.electionpolicy.fabric8.LeaseProtocol.Role;
import io.github.electionpolicy.fabric8.LeaseProtocolState.Finish;
import io.github.electionpolicy.fabric8.LeaseProtocolState.Pending;
import io.github.electionpolicy.fabric8.LeaseStep.Action;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import io.github.electionpolicy.fabric8.LeaseStep.LossCause;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import java.util.Optional;

/**
 * The leader's rules of {@link LeaseProtocol}, the renewing half of client-go's {@code tryAcquireOrRenew}: what
 * a leader does next (renew every retry period, release or abandon once asked to finish, give the term up after
 * a failed start), what a renewal's answer and a conflict's re-read lead to, and when the term is lost (its renew
 * deadline passed, a late renewal, the Lease deleted or taken) and what that loss leaves behind: this replica's own
 * write, or renewals whose outcome is unknown.
 *
 * <p>Pure: static functions of the {@link LeaseProtocolState} and the current {@link Moment}; no thread, lock,
 * clock or logger. Not thread-safe: the protocol's one driver thread calls them.
 */
final class LeaseProtocolRenewing {

  private LeaseProtocolRenewing() {}

  static Action lead(LeaseProtocolState s, Moment now) {
    long t = now.nanos();
    long deadline = s.lastRenewSentNanos + s.renewDeadlineNanos;
    if (s.relinquishing) {
      if (s.relinquishRelease && t - deadline < 0) {
        return LeaseProtocolReleasing.release(s, now);
      }
      // Left to expire because a service may still run: this process must wait it out like any other
      // holder's term, instead of taking its own last term back at once.
      s.lastWritten = null;
      s.lastAttempted = null;
      return lost(s, LossCause.START_FAILED, Optional.empty());
    }
    if (s.finish == Finish.RELEASE) {
      if (t - deadline < 0) {
        s.cleanRelease = true;
        return LeaseProtocolReleasing.release(s, now);
      }
      if (s.flaw != Flaw.NO_RELEASE_AFTER_DEADLINE) {
        // The services stopped and the term ended at its deadline; a renewal may have landed unheard (its timer
        // cancelled it at the deadline). The Lease is released only if a read shows that it still says what this
        // replica wrote, so that no one wrote it since.
        return LeaseProtocolReleasing.checkBeforeRelease(s, now);
      }
      s.role = Role.FINISHED;
      return new LeaseStep.Finished();
    }
    if (s.finish == Finish.ABANDON) {
      s.fact(FactKind.ABANDONED, "");
      s.role = Role.FINISHED;
      return new LeaseStep.Finished();
    }
    if (t - deadline >= 0 && s.flaw != Flaw.IGNORE_RENEW_DEADLINE) {
      return lost(s, LossCause.RENEW_DEADLINE, Optional.empty());
    }
    long nextAttempt = s.lastAttemptNanos + s.retryPeriodNanos;
    if (t - nextAttempt < 0 && !s.renewSoon) {
      // Wake at the deadline if it comes first: a loss is seen when it happens, not a retry period later.
      return new LeaseStep.Await(nextAttempt - deadline < 0 || s.flaw == Flaw.IGNORE_RENEW_DEADLINE
          ? nextAttempt : deadline);
    }
    s.lastAttemptNanos = t;
    s.renewSoon = false;
    s.pending = Pending.RENEW;
    s.pendingSentNanos = t;
    LeaseRecord renewal = new LeaseRecord(s.identity, s.leaseDurationSeconds, s.mine.acquireTime(),
        LeaseProtocolState.wall(now), s.mine.leaseTransitions(), s.mine.resourceVersion());
    s.renewalInFlight = renewal;
    return new LeaseStep.Update(renewal, s.flaw == Flaw.IGNORE_RENEW_DEADLINE ? t + s.requestTimeoutNanos
        : deadline);
  }

  static Action renewAnswered(LeaseProtocolState s, Moment now, Answer answer) {
    long t = now.nanos();
    long sent = s.pendingSentNanos;
    if (answer instanceof Answer.Written written) {
      s.succeeded(sent);
      s.writeKnown();
      s.written(written.record(), sent);
      s.mine = written.record();
      s.lastWritten = s.mine;
      s.observe(s.mine, t);
      if (t - (s.lastRenewSentNanos + s.renewDeadlineNanos) >= 0 && s.flaw != Flaw.IGNORE_RENEW_DEADLINE) {
        // The term lapsed before the answer came: its services may have seen it invalid, so it must not
        // become valid again.
        return lost(s, LossCause.LATE_RENEWAL, Optional.of(s.identity));
      }
      s.lastRenewSentNanos = sent;
      s.signals.add(new LeaseStep.Renewed(sent + s.renewDeadlineNanos, t - sent));
      return lead(s, now);
    }
    Answer.Failed failed = (Answer.Failed) answer;
    s.signals.add(new LeaseStep.RenewFailed(failed.failure(), t - s.lastRenewSentNanos));
    if (failed.kind() == FailureKind.OTHER) {
      // No answer in time, a cut connection, a 5xx: the server may have applied it all the same.
      s.renewalInDoubt();
    } else {
      s.renewalInFlight = null; // refused: a 409 or a 404 changes nothing
    }
    if (failed.kind() == FailureKind.NOT_FOUND) {
      // Deleted: a follower may create it anew, so this term cannot go on.
      s.succeeded(sent);
      s.observe(null, t);
      return lost(s, LossCause.DELETED, Optional.empty());
    }
    if (failed.kind() == FailureKind.CONFLICT) {
      s.succeeded(sent);
      long deadline = s.lastRenewSentNanos + s.renewDeadlineNanos;
      if (t - deadline >= 0) {
        return lost(s, LossCause.RENEW_DEADLINE, Optional.empty());
      }
      s.pending = Pending.REREAD;
      s.pendingSentNanos = t;
      return new LeaseStep.Read(deadline);
    }
    s.fact(FactKind.RENEWAL_FAILED, failed.failure());
    return lead(s, now);
  }

  static Action rereadAnswered(LeaseProtocolState s, Moment now, Answer answer) {
    long t = now.nanos();
    if (answer instanceof Answer.Failed failed) {
      s.signals.add(new LeaseStep.RenewFailed(failed.failure(), t - s.lastRenewSentNanos));
      return lead(s, now);
    }
    s.succeeded(s.pendingSentNanos);
    LeaseRecord current = answer instanceof Answer.Found found ? found.record() : null;
    s.observe(current, t);
    if (current == null) {
      return lost(s, LossCause.DELETED, Optional.empty());
    }
    if (!current.heldBy(s.identity)) {
      return lost(s, LossCause.TAKEN, Optional.ofNullable(current.holder()));
    }
    if (!current.sameTerm(s.mine)) {
      return lost(s, LossCause.SAME_IDENTITY, Optional.of(s.identity));
    }
    // Still ours (a foreign write moved the resourceVersion, or a renewal in doubt landed): renew again at once.
    s.writeKnown();
    s.mine = current;
    s.lastWritten = current;
    s.lastAttemptNanos = t - s.retryPeriodNanos;
    return lead(s, now);
  }

  static Action lost(LeaseProtocolState s, LossCause cause, Optional<String> holder) {
    s.role = Role.LOST;
    s.relinquishing = false;
    s.lostByRelinquish = cause == LossCause.START_FAILED;
    s.lossLeftOwnWrite = (cause == LossCause.LATE_RENEWAL || cause == LossCause.TERM_LAPSED) && s.mine != null
        && s.mine.heldBy(s.identity);
    s.lossAtRenewDeadline = cause == LossCause.RENEW_DEADLINE && s.mine != null && s.mine.heldBy(s.identity);
    s.signals.add(new LeaseStep.Lost(cause, holder));
    if (cause == LossCause.TAKEN || cause == LossCause.DELETED) {
      s.signals.add(new LeaseStep.Following(holder));
    }
    return new LeaseStep.HandleLoss();
  }
}
