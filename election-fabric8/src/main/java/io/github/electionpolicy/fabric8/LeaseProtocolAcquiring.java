package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseProtocol.Flaw;
import io.github.electionpolicy.fabric8.LeaseProtocol.Role;
import io.github.electionpolicy.fabric8.LeaseProtocolState.Pending;
import io.github.electionpolicy.fabric8.LeaseStep.Action;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import java.util.Optional;

/**
 * The follower's rules of {@link LeaseProtocol}, the acquiring half of client-go's {@code tryAcquireOrRenew}: when
 * to read the Lease (at once, every retry period while polling, once per lease duration under a watch), when the
 * holder's term has run out on this process's own clock, what a read's answer leads to, and how a new term is
 * written and taken in (its fencing token counted past every one seen).
 *
 * <p>Pure: static functions of the {@link LeaseProtocolState} and the current {@link Moment}; no thread, lock,
 * clock or logger. Not thread-safe: the protocol's one driver thread calls them.
 */
final class LeaseProtocolAcquiring {

  private LeaseProtocolAcquiring() {}

  static Action follow(LeaseProtocolState s, Moment now) {
    if (s.closing || s.declineOnly) {
      return declineOrFinish(s, now);
    }
    long t = now.nanos();
    if (s.backingOff) {
      if (t - s.notBeforeNanos < 0) {
        return new LeaseStep.Await(s.notBeforeNanos);
      }
      s.backingOff = false;
      s.readNow = true;
    }
    java.util.OptionalLong handedOver = s.observedAny ? handOverSentNanos(s, s.observed, t)
        : java.util.OptionalLong.empty();
    if (handedOver.isPresent()) {
      if (s.observedWritable || s.flaw == Flaw.HAND_OVER_UNREAD) {
        return adopt(s, now, s.observed, handedOver.getAsLong());
      }
      s.readNow = true; // a write from the record alone would drop the Lease's metadata: read it, then take it in
    }
    if (s.seenFree) {
      // Seen free before the start (a sharded runner's list and watch, LeaseProtocol.seen): take it with that
      // record's resourceVersion as the precondition, as after a read that showed it. If anyone wrote since, the
      // write conflicts and a read follows at once; one round trip saved on the way to a released shard.
      s.seenFree = false;
      if (!s.readOnce && s.observedAny && s.observed != null && s.observed.holder() == null
          && s.observed.resourceVersion() != null) {
        return take(s, now, s.observed);
      }
    }
    if (s.readNow || !s.watchOpen || !s.readOnce || t - (s.lastReadSentNanos + readPeriodNanos(s)) >= 0
        || t - attemptDueNanos(s, t) >= 0) {
      s.readNow = false;
      s.pending = Pending.READ;
      s.pendingSentNanos = t;
      return new LeaseStep.Read(t + s.requestTimeoutNanos);
    }
    return awaitAsFollower(s, t);
  }

  private static long readPeriodNanos(LeaseProtocolState s) {
    return s.watchOpen ? s.leaseDurationNanos : s.retryPeriodNanos;
  }

  private static Action awaitAsFollower(LeaseProtocolState s, long t) {
    long wake;
    if (s.failuresInARow > 0 && s.flaw == Flaw.NO_WAIT_AFTER_FAILURE) {
      // The broken variant sends its next read at once (never a wake-up that sends nothing: the loop would spin).
      s.readNow = true;
      wake = t;
    } else if (s.failuresInARow > 0 || !s.watchOpen) {
      long jitter = (long) (s.retryPeriodNanos * 0.2 * s.random.nextDouble());
      wake = t + s.retryPeriodNanos + jitter;
    } else {
      wake = s.lastReadSentNanos + readPeriodNanos(s);
    }
    if (s.failuresInARow == 0) {
      // Try exactly when the holder's lease runs out, not at the next tick after it.
      long due = attemptDueNanos(s, t);
      if (due - t <= 0) {
        due = t + s.retryPeriodNanos;
      }
      if (due - wake < 0) {
        wake = due;
      }
    }
    return new LeaseStep.Await(wake);
  }

  /**
   * When this follower should next try for the Lease: at once when it is free, missing without a holder to
   * wait for, or left by this process's own last term; otherwise once the holder's lease duration has passed
   * since the record last changed.
   */
  static long attemptDueNanos(LeaseProtocolState s, long t) {
    if (!s.observedAny) {
      return t;
    }
    if (s.observed == null) {
      boolean heldByAnother = s.lastHolder != null && !s.lastHolder.equals(s.identity);
      return heldByAnother ? s.observedNanos + s.lastHolderDurationNanos : t;
    }
    String holder = s.observed.holder();
    if (holder == null || holder.equals(s.identity) && isOwnLastTerm(s, s.observed)) {
      return t;
    }
    long duration = s.durationNanos(s.observed);
    if (s.flaw == Flaw.EARLY_TAKEOVER) {
      return s.observedNanos + duration - s.retryPeriodNanos;
    }
    if (s.flaw == Flaw.REMOTE_RENEW_TIME && s.observed.renewTime() != null && s.observedWall != null) {
      return s.observedNanos + java.time.Duration.between(s.observedWall, s.observed.renewTime()).toNanos()
          + duration;
    }
    return s.observedNanos + duration;
  }

  /**
   * Whether a record naming this identity is this process's own last term, left by it: exactly what its last
   * confirmed write stored (same term and resourceVersion, so a restored copy of an older record does not
   * count), the term of a take whose answer never came (the server may have applied it), or exactly what a renewal
   * of its lost term whose answer never came would have stored ({@link LeaseProtocolState#lostTermDoubts}: a renewal
   * that landed after the renew deadline).
   */
  private static boolean isOwnLastTerm(LeaseProtocolState s, LeaseRecord record) {
    boolean lastWrite = record.sameTerm(s.lastWritten) && s.lastWritten.resourceVersion() != null
        && s.lastWritten.resourceVersion().equals(record.resourceVersion());
    return lastWrite || record.sameTerm(s.lastAttempted)
        || record.heldBy(s.identity) && s.lostTermDoubts.stream().anyMatch(record::sameContent);
  }

  /**
   * When the write was sent that dates {@code record} as this process's own term, if it is a hand-over this process
   * may take in now: it names this identity with a proof ({@link LeaseRecord#handOverProof}) that is the
   * resourceVersion of one of this process's own last membership writes, whose send time plus the renew deadline is
   * still ahead; it is neither this process's own last term nor a hand-over taken in before; no larger token was seen;
   * and its lease duration is at least this process's own, so that every other replica, which waits that long from
   * its own sight of the hand-over (after the server stored it, so after that write was sent), waits past the end of
   * the term that this process counts from the write. Only a follower that is not closing or backing off takes one in.
   * The write's send time is the last moment known to be before the hand-over, as a renewal's send time is before the
   * renewal: the term runs from there, never from when the hand-over was seen.
   */
  static java.util.OptionalLong handOverSentNanos(LeaseProtocolState s, LeaseRecord record, long t) {
    return s.closing || s.declineOnly || s.backingOff ? java.util.OptionalLong.empty() : validHandOver(s, record, t);
  }

  /** {@link #handOverSentNanos}, whether or not this follower is closing or backing off. */
  private static java.util.OptionalLong validHandOver(LeaseProtocolState s, LeaseRecord record, long t) {
    if (!namesThisProcess(s, record)) {
      return java.util.OptionalLong.empty();
    }
    java.util.OptionalLong sent = s.membershipWrites.sentNanos(record.handOverProof());
    if (sent.isEmpty()) {
      return sent;
    }
    long from = s.flaw == Flaw.HAND_OVER_DATED_AT_SIGHT ? s.observedNanos : sent.getAsLong();
    return t - (from + s.renewDeadlineNanos) < 0 ? java.util.OptionalLong.of(from) : java.util.OptionalLong.empty();
  }

  /** Whether {@code record} is a hand-over to this process it could take in, if its proof is one of its own writes. */
  private static boolean namesThisProcess(LeaseProtocolState s, LeaseRecord record) {
    return record != null && record.handOverProof() != null && record.heldBy(s.identity) && s.role == Role.FOLLOWING
        && !isOwnLastTerm(s, record) && !record.sameTerm(s.adopted) && record.transitions() >= s.highestTransitions
        && record.transitions() > s.ledBefore && s.durationNanos(record) >= s.leaseDurationNanos;
  }

  /**
   * Takes in {@code record}, a hand-over to this process, as its own term, dated from {@code sentNanos}: it leads
   * with no request of its own, and renews it (dropping the proof) a retry period after that time.
   */
  private static Action adopt(LeaseProtocolState s, Moment now, LeaseRecord record, long sentNanos) {
    takeIn(s, record, sentNanos);
    s.fact(FactKind.HANDED_OVER_HERE, Integer.toString(record.transitions()));
    s.signals.add(new LeaseStep.Elected(record, sentNanos + s.renewDeadlineNanos,
        Optional.ofNullable(s.lastOtherHolder)));
    return LeaseProtocolRenewing.lead(s, now);
  }

  /**
   * Holds {@code record}, a hand-over to this process, as its own term dated from {@code sentNanos}: to lead under it
   * ({@link #adopt}) or to release it ({@link #declineOrFinish}), whose rules are a leader's, a compare-and-set on it.
   */
  private static void takeIn(LeaseProtocolState s, LeaseRecord record, long sentNanos) {
    s.writeKnown();
    s.mine = record;
    s.lastWritten = record;
    s.lastAttempted = null;
    s.adopted = record;
    s.highestLed = Math.max(s.highestLed, record.transitions());
    s.lastRenewSentNanos = sentNanos;
    s.lastAttemptNanos = sentNanos;
    s.role = Role.LEADING;
    s.releaseRetried = false;
  }

  /**
   * A follower that closes (or only declines, {@link LeaseProtocol#declineHandOvers}) and holds a hand-over naming it,
   * one it may take in, releases it instead of leaving it to expire: its own work for it never started, and the
   * shard is free at once for whoever the plan gives it to. It reads the Lease first when a write from the record it
   * saw would drop metadata. Otherwise a closing follower finishes, and one that only declines waits for its close.
   */
  private static Action declineOrFinish(LeaseProtocolState s, Moment now) {
    long t = now.nanos();
    java.util.OptionalLong handedOver = s.observedAny && s.flaw != Flaw.NO_DECLINE ? validHandOver(s, s.observed, t)
        : java.util.OptionalLong.empty();
    if (handedOver.isPresent()) {
      if (s.observedWritable) {
        takeIn(s, s.observed, handedOver.getAsLong());
        s.successor = null;
        s.cleanRelease = false;
        s.fact(FactKind.HAND_OVER_DECLINED, Integer.toString(s.observed.transitions()));
        return LeaseProtocolReleasing.release(s, now);
      }
      s.pending = Pending.READ;
      s.pendingSentNanos = t;
      return new LeaseStep.Read(t + s.requestTimeoutNanos);
    }
    if (s.closing) {
      // A hand-over to it whose proof is not (yet) one of its writes: the membership write it names, sent before the
      // hand-over was seen, may still be answered (within a request timeout of its send), and then it is declined
      // (review h-resight, SimulationShardingLateProofDecline); finished at once, it would be left to expire.
      long proofAnsweredBy = s.observedNanos + Math.min(s.renewDeadlineNanos, s.requestTimeoutNanos);
      if (s.observedAny && s.flaw != Flaw.NO_DECLINE && namesThisProcess(s, s.observed)
          && s.membershipWrites.sentNanos(s.observed.handOverProof()).isEmpty() && t - proofAnsweredBy < 0) {
        return new LeaseStep.Await(proofAnsweredBy);
      }
      s.role = Role.FINISHED;
      return new LeaseStep.Finished();
    }
    return new LeaseStep.Await(t + s.leaseDurationNanos);
  }

  static Action readAnswered(LeaseProtocolState s, Moment now, Answer answer) {
    long t = now.nanos();
    if (answer instanceof Answer.Failed failed) {
      s.failed(failed.failure());
      if (s.declineOnly && !s.closing) {
        // A hand-over it could not read to decline: it tries once more a lease duration on, if its close has not come
        // by then and the term is still valid. A closing one (as the driver closes each at once) reads again a retry
        // period on while the hand-over is still valid, as a closing follower does, and otherwise finishes.
        return new LeaseStep.Await(t + s.leaseDurationNanos);
      }
      return awaitAsFollower(s, t);
    }
    s.succeeded(s.pendingSentNanos);
    s.readOnce = true;
    s.lastReadSentNanos = s.pendingSentNanos;
    s.lastReadDone(t);
    LeaseRecord current = answer instanceof Answer.Found found ? found.record() : null;
    if (current == null && !(answer instanceof Answer.Missing)) {
      throw new IllegalArgumentException("a read answers Found, Missing or Failed, not " + answer);
    }
    s.lastReadVersion = current == null ? null : current.resourceVersion();
    s.observe(current, t, now.wall());
    s.observedWritable = true;
    java.util.OptionalLong handedOver = handOverSentNanos(s, current, t);
    if (handedOver.isPresent()) {
      return adopt(s, now, current, handedOver.getAsLong());
    }
    if (s.declineOnly || s.closing && validHandOver(s, current, t).isPresent()) {
      // Only a hand-over to decline changes what a closing follower does with its read's answer.
      return declineOrFinish(s, now);
    }
    if (attemptDueNanos(s, t) - t > 0) {
      // A Lease deleted under its holder may still be led: wait out the holder's lease duration.
      String holder = current == null ? s.lastHolder : current.holder();
      if (current != null && current.heldBy(s.identity) && !s.warnedOfSameIdentity) {
        s.warnedOfSameIdentity = true;
        s.fact(FactKind.SAME_IDENTITY_WAITING, s.identity);
      }
      s.signals.add(new LeaseStep.Following(Optional.ofNullable(holder)));
      return awaitAsFollower(s, t);
    }
    return take(s, now, current);
  }

  /** Writes a new term over {@code current} (null: the Lease is missing), whose holder's term has run out. */
  private static Action take(LeaseProtocolState s, Moment now, LeaseRecord current) {
    long t = now.nanos();
    // Every new term counts as a transition, even one taken back from this process's own earlier term:
    // leaseTransitions then tells any two terms apart, which fencing relies on.
    if (s.highestTransitions >= Integer.MAX_VALUE
        && (current == null || current.transitions() < Integer.MAX_VALUE)) {
      // An exhausted token was reset by an operator (the Lease deleted, or its count lowered), as the
      // TOKEN_EXHAUSTED error asks: count on from the Lease, not from the exhausted maximum.
      s.highestTransitions = current == null ? -1 : current.transitions();
      s.fact(FactKind.TOKEN_RESET, Long.toString(s.highestTransitions + 1));
    }
    long base = Math.max(s.highestTransitions, current == null ? -1 : current.transitions());
    if (base >= Integer.MAX_VALUE) {
      s.fact(FactKind.TOKEN_EXHAUSTED, Long.toString(base));
      s.signals.add(new LeaseStep.Following(Optional.ofNullable(current == null ? null : current.holder())));
      return new LeaseStep.Await(t + s.leaseDurationNanos);
    }
    s.takingFrom = Optional.ofNullable(current == null ? null : current.holder());
    long transitions = s.flaw == Flaw.NO_TRANSITION_INCREMENT ? Math.max(0, base) : base + 1;
    LeaseRecord taken = new LeaseRecord(s.identity, s.leaseDurationSeconds, LeaseProtocolState.wall(now),
        LeaseProtocolState.wall(now), (int) transitions, current == null ? null : current.resourceVersion());
    s.pending = Pending.TAKE;
    s.pendingSentNanos = t;
    s.takeInFlight = taken;
    return current == null ? new LeaseStep.Create(taken, t + s.requestTimeoutNanos)
        : new LeaseStep.Update(taken, t + s.requestTimeoutNanos);
  }

  static Action takeAnswered(LeaseProtocolState s, Moment now, Answer answer) {
    long sent = s.pendingSentNanos;
    if (answer instanceof Answer.Written written) {
      s.succeeded(sent);
      LeaseRecord record = written.record();
      s.observe(record, now.nanos());
      s.writeKnown();
      s.written(record, sent);
      s.mine = record;
      s.highestLed = Math.max(s.highestLed, record.transitions());
      s.lastWritten = record;
      s.lastAttempted = null;
      s.lastRenewSentNanos = sent;
      s.lastAttemptNanos = sent;
      s.role = Role.LEADING;
      s.releaseRetried = false;
      s.signals.add(new LeaseStep.Elected(record, sent + s.renewDeadlineNanos, s.takingFrom));
      return LeaseProtocolRenewing.lead(s, now);
    }
    LeaseStep.Answer.Failed failed = (Answer.Failed) answer;
    boolean created = s.takeInFlight == null || s.takeInFlight.resourceVersion() == null;
    if (failed.kind() == FailureKind.CONFLICT || failed.kind() == FailureKind.NOT_FOUND && !created) {
      // Another replica wrote first, or the Lease went away: read again at once. (A create that 404s found no
      // namespace to create it in: read again at once, it finds the Lease missing and creates again, with no
      // wait: it is a failed take, below.)
      s.succeeded(sent);
      s.readNow = true;
      return follow(s, now);
    }
    s.lastAttempted = s.takeInFlight;
    s.failed(failed.failure());
    // The take failed without naming a holder: this process follows, whoever (if anyone) leads.
    s.signals.add(new LeaseStep.Following(Optional.empty()));
    return awaitAsFollower(s, now.nanos());
  }
}
