package io.github.electionpolicy.fabric8;

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
 * while the Lease still shows this very term and the renew deadline has not passed; afterwards the protocol
 * finishes, or, when the term was given up after a failed start, reports the loss.
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
    LeaseRecord released = new LeaseRecord(null, 1, LeaseProtocolState.wall(now), LeaseProtocolState.wall(now),
        s.mine.leaseTransitions(), s.mine.resourceVersion());
    return new LeaseStep.Update(released, t + s.requestTimeoutNanos);
  }

  static Action releaseAnswered(LeaseProtocolState s, Moment now, Answer answer) {
    if (answer instanceof Answer.Written written) {
      s.succeeded(s.pendingSentNanos);
      s.observe(written.record(), now.nanos());
      s.fact(FactKind.RELEASED, "");
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
    if (answer instanceof Answer.Found found && found.record().heldBy(s.identity)
        && found.record().sameTerm(s.mine) && now.nanos() - (s.lastRenewSentNanos + s.renewDeadlineNanos) < 0) {
      s.succeeded(s.pendingSentNanos);
      s.mine = found.record();
      return release(s, now);
    }
    if (answer instanceof Answer.Failed failed) {
      s.fact(FactKind.RELEASE_FAILED, failed.failure());
    }
    return afterRelease(s);
  }

  private static Action afterRelease(LeaseProtocolState s) {
    if (s.relinquishing) {
      return LeaseProtocolRenewing.lost(s, LossCause.START_FAILED, Optional.empty());
    }
    s.role = Role.FINISHED;
    return new LeaseStep.Finished();
  }
}
