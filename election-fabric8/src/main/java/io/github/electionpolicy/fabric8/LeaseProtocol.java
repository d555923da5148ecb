package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseProtocolState.Finish;
import io.github.electionpolicy.fabric8.LeaseProtocolState.Pending;
import io.github.electionpolicy.fabric8.LeaseStep.Action;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.LossCause;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import java.util.Optional;

/**
 * The Lease protocol of client-go's {@code tools/leaderelection} as a pure state machine: it knows no fabric8
 * type, no thread, no logger and no clock. Each input (the current {@link Moment}, and what was observed:
 * the answer to the request in flight, a watch event, a wake-up, a close) returns a {@link LeaseStep}: the
 * one thing to do next and what happened, as values. {@link LeaseElector} drives it with threads and HTTP;
 * the deterministic simulation drives the same class on one thread against a simulated API server.
 *
 * <p>The rules:
 * <ul>
 *   <li>Every write is conditional on the resourceVersion last read; a conflict means re-read.
 *   <li>A follower judges expiry by the monotonic time at which it last saw the Lease record change, never by
 *       the remote renewTime, so clock skew between nodes does not matter. It honours the holder's own
 *       leaseDurationSeconds, however long (the holder keeps its term for as long as it wrote).
 *   <li>A follower tries at once when the Lease is free, missing without a holder to wait for, or left by
 *       this process's own last term; otherwise exactly when the holder's lease duration has passed since the
 *       record last changed. Watch events are observations dated when they arrived. With a watch open it
 *       reads once per lease duration as a safety net; without one it polls every retry period.
 *   <li>The leader renews every retry period and has lost once the renew deadline has passed since it sent
 *       its last successful renewal; a renewal that succeeds after that is a loss too.
 *   <li>Every new term increments leaseTransitions, past the highest count this process has ever seen, so
 *       the fencing token never decreases and is never negative. At {@link Integer#MAX_VALUE} no new term
 *       is taken ({@link FactKind#TOKEN_EXHAUSTED}): an operator must reset the token.
 *   <li>After a term given up because a service could not start, the next attempt waits one retry period,
 *       doubling with each such term in a row up to the lease duration.
 *   <li>Release writes an empty holder and leaseDurationSeconds = 1, conditional on this replica's own write.
 *       Once the term has ended (past the renew deadline) a close releases only what the Lease still shows as
 *       this replica wrote it: a renewal that landed late, or, read back first, its last known write or a renewal
 *       whose answer never came.
 *   <li>A hand-over (a sharded runner's): a clean release given a successor ({@link #handOverTo}) writes instead a
 *       new term for it (leaseTransitions + 1, this replica's lease duration) with a proof, the resourceVersion of the
 *       successor's membership Lease this replica last saw. The successor takes such a term in as its own, with no
 *       request, only if the proof is the version one of its own last membership writes made
 *       ({@link #handOverProofs}): it then leads from that write's send time, which is before the hand-over was
 *       written and so before any other replica can have seen it, until that time plus its renew deadline unless
 *       renewed. Every other replica waits the term out from its own sight of it, as any holder's. A hand-over with
 *       no such proof, or one whose renew deadline has passed, is waited out as another process's term. A follower
 *       that closes (or runs only to decline, {@link #declineHandOvers}) releases such a term instead of leaving it to
 *       expire: its own work for it never started.
 * </ul>
 *
 * <p>This class is the entry point: it takes each input, hands it to the rules for the protocol's role and
 * returns the step. Everything it remembers is one {@link LeaseProtocolState}; the rules live beside it, one pure
 * class per role: {@link LeaseProtocolAcquiring} (a follower reads and takes the Lease), {@link
 * LeaseProtocolRenewing} (a leader renews it, or loses it) and {@link LeaseProtocolReleasing} (a leader lets it go).
 *
 * <p>Not thread-safe: one driver thread feeds it.
 */
final class LeaseProtocol {

  /** The longest lease duration taken without a {@link FactKind#LONG_LEASE_DURATION} note. */
  static final long LONG_LEASE_SECONDS = 3600;

  enum Role { FOLLOWING, LEADING, LOST, FINISHED }

  /**
   * Deliberate defects, for tests only: the simulation must catch every one of them, which shows that its
   * invariant checks can fail. Production code always uses {@link #NONE}.
   */
  enum Flaw {
    /** The real protocol. */
    NONE,
    /** The leader never gives up at its renew deadline. */
    IGNORE_RENEW_DEADLINE,
    /** A follower takes over one retry period before the holder's lease duration has passed. */
    EARLY_TAKEOVER,
    /** A follower judges expiry by the remote renewTime against its own wall clock. */
    REMOTE_RENEW_TIME,
    /** A new term keeps the transitions count instead of incrementing it. */
    NO_TRANSITION_INCREMENT,
    /**
     * A close after the renew deadline (a loss at the deadline, or a finish that comes after it) does not read the
     * Lease back: it finishes without releasing, so a renewal that landed unheard (its answer came after its timer
     * cancelled it) is left to expire.
     */
    NO_RELEASE_AFTER_DEADLINE,
    /** A follower whose call failed tries again at once instead of after a jittered retry period. */
    NO_WAIT_AFTER_FAILURE,
    /** A hand-over is dated from when this process saw it, not from the membership write its proof names. */
    HAND_OVER_DATED_AT_SIGHT,
    /** A hand-over seen by a list and watch is taken in unread even when a write from it would drop metadata. */
    HAND_OVER_UNREAD,
    /** A closing or declining follower leaves a hand-over naming it to expire instead of releasing it. */
    NO_DECLINE
  }

  private final LeaseProtocolState s;

  LeaseProtocol(String identity, long leaseDurationNanos, long renewDeadlineNanos, long retryPeriodNanos,
      long requestTimeoutNanos, long seed) {
    this(identity, leaseDurationNanos, renewDeadlineNanos, retryPeriodNanos, requestTimeoutNanos, seed, Flaw.NONE);
  }

  LeaseProtocol(String identity, long leaseDurationNanos, long renewDeadlineNanos, long retryPeriodNanos,
      long requestTimeoutNanos, long seed, Flaw flaw) {
    this.s = new LeaseProtocolState(identity, leaseDurationNanos, renewDeadlineNanos, retryPeriodNanos,
        requestTimeoutNanos, seed, flaw);
  }

  // ---- inputs -------------------------------------------------------------------------------------------

  /**
   * Before {@link #start}: what this process already saw of the Lease, and since when on the same monotonic clock
   * (a sharded runner's list and watch of all its Leases, {@link ShardLeaseView}). A first read that shows the same
   * content keeps that time, so a holder that stopped renewing is judged expired a lease duration after this process
   * first saw that content, as if this follower had read it then; any other content starts the wait from the read
   * that shows it. As safe as the protocol's own reads: the time is when this process received the content, never
   * earlier than the server stored it. A record seen free (no holder, with a resourceVersion) is taken by the first
   * step without a read: the write has that resourceVersion as its precondition, so it succeeds only if nobody wrote
   * the Lease since, and a conflict leads to a read at once.
   *
   * @throws IllegalStateException once the protocol has started
   */
  void seen(LeaseRecord record, long seenNanos) {
    seen(record, seenNanos, true);
  }

  /**
   * {@link #seen(LeaseRecord, long)}, with {@code takeUnread} false for a Lease whose write must be built from a read
   * of it (its metadata holds what the record does not carry, which a write from the record alone would drop): a
   * record seen free is then read first, as any other.
   */
  void seen(LeaseRecord record, long seenNanos, boolean takeUnread) {
    java.util.Objects.requireNonNull(record, "record");
    if (s.observedAny || s.readOnce || s.pending != LeaseProtocolState.Pending.NONE) {
      throw new IllegalStateException("seen(...) is for before start");
    }
    s.observe(record, seenNanos);
    s.observedWritable = takeUnread;
    s.seenFree = takeUnread && record.holder() == null && record.resourceVersion() != null;
  }

  /**
   * Before {@link #start}: the highest {@code leaseTransitions} this process saw in the Lease, perhaps before it was
   * deleted (a sharded runner's list and watch remembers it for a new runner of the shard): every term this protocol
   * takes counts past it, as past every count it saw itself, so a Lease deleted by hand and created again does not
   * give a token that went back. Negative: none seen.
   *
   * @throws IllegalStateException once the protocol has started
   */
  void seenTransitions(long transitions) {
    if (s.readOnce || s.pending != LeaseProtocolState.Pending.NONE) {
      throw new IllegalStateException("seenTransitions(...) is for before start");
    }
    s.highestTransitions = Math.max(s.highestTransitions, transitions);
  }

  /**
   * A leader's next renewal is due at once rather than a retry period after its last attempt: it is sent at the next
   * {@link #wake} (or, with a request in flight, once that is answered). It carries what the driver writes with every
   * write (a sharded member's leaving mark). No step of its own; ignored unless leading.
   */
  void renewSoon() {
    if (s.role == Role.LEADING) {
      s.renewSoon = true;
    }
  }

  /**
   * Where the send times of this process's membership writes are found: a hand-over (a term another replica wrote
   * for this identity, {@link LeaseRecord#handOverProof}) whose proof names one of them is taken in as this process's
   * own term, dated from that send time (see {@link LeaseProtocolAcquiring#handOverSentNanos}). Read at each input;
   * by default none is known, and a term this process did not write is waited out, as always.
   */
  void handOverProofs(OwnWrites writes) {
    s.membershipWrites = java.util.Objects.requireNonNull(writes, "writes");
  }

  /**
   * A clean release (a finish while leading, before the renew deadline) writes {@code successor} as the holder of a
   * new term instead of an empty holder, with {@code proof}, the resourceVersion of the successor's membership Lease
   * as this process last saw it: a hand-over ({@link LeaseProtocolReleasing#release}). Any other release (after a loss,
   * a lapse or a failed start) stays plain. A {@code null} successor takes a hand-over named before back: the release
   * is plain again. Named again before the release, the latest name and proof count.
   */
  void handOverTo(String successor, String proof) {
    if (successor == null) {
      s.successor = null;
      s.successorProof = null;
      return;
    }
    java.util.Objects.requireNonNull(proof, "proof");
    if (!successor.equals(s.identity)) {
      s.successor = successor;
      s.successorProof = proof;
    }
  }

  /**
   * Before {@link #start}: this protocol only declines. It never takes the Lease and never leads its work; if the Lease
   * holds a hand-over naming this process that it could take in, it releases it (a compare-and-set on it, the term
   * counted in {@link #highestLed}), so that the next owner need not wait it out; otherwise it waits for its close. A
   * replica that leaves, or holds no place for the shard, runs one ({@link ShardCoordinatorCommand.Decline}).
   *
   * @throws IllegalStateException once the protocol has started
   */
  void declineHandOvers() {
    if (s.readOnce || s.pending != LeaseProtocolState.Pending.NONE) {
      throw new IllegalStateException("declineHandOvers() is for before start");
    }
    s.declineOnly = true;
  }

  /**
   * Before {@link #start}: the highest leaseTransitions of a term of this Lease that this process led (or declined) with
   * an earlier protocol ({@link #highestLed}). A hand-over at or below it is never taken in: a term this process let go
   * (perhaps taken by another replica at once since), seen again by a view that lags its own writes. Negative: none.
   */
  void ledBefore(long transitions) {
    s.ledBefore = Math.max(s.ledBefore, transitions);
  }

  /** The highest leaseTransitions of a term it held as a leader (taken, taken in, or declined); -1: none. */
  long highestLed() {
    return s.highestLed;
  }

  /** When this process sent the write that made {@code resourceVersion}, if it is one of its last few. */
  java.util.OptionalLong ownWriteSentNanos(String resourceVersion) {
    return s.writeSentNanos(resourceVersion);
  }

  /** The first step: a follower reads the Lease. */
  LeaseStep start(Moment now) {
    return step(LeaseProtocolAcquiring.follow(s, now));
  }

  /** The answer to the request that the last step asked for (a read, a create or an update). */
  LeaseStep answer(Moment now, Answer answer) {
    Pending was = s.pending;
    s.pending = Pending.NONE;
    switch (was) {
      case READ:
        return step(LeaseProtocolAcquiring.readAnswered(s, now, answer));
      case TAKE:
        return step(LeaseProtocolAcquiring.takeAnswered(s, now, answer));
      case RENEW:
        return step(LeaseProtocolRenewing.renewAnswered(s, now, answer));
      case REREAD:
        return step(LeaseProtocolRenewing.rereadAnswered(s, now, answer));
      case RELEASE:
        return step(LeaseProtocolReleasing.releaseAnswered(s, now, answer));
      case RELEASE_REREAD:
        return step(LeaseProtocolReleasing.releaseRereadAnswered(s, now, answer));
      case RELEASE_CHECK:
        return step(LeaseProtocolReleasing.releaseCheckAnswered(s, now, answer));
      default:
        throw new IllegalStateException("no request in flight, yet an answer came: " + answer);
    }
  }

  /**
   * The take the last step asked for was never sent (the driver held it for the RBAC preflight's verdict until it
   * went stale): it is forgotten, no answer and no server contact counted, and the follower reads again at once,
   * so that a take is decided, and its term counted, from that read.
   */
  LeaseStep takeWithdrawn(Moment now) {
    if (s.pending != Pending.TAKE) {
      throw new IllegalStateException("no take to withdraw: " + s.pending);
    }
    s.pending = Pending.NONE;
    s.takeInFlight = null;
    s.readNow = true;
    return step(LeaseProtocolAcquiring.follow(s, now));
  }

  /** The wait of the last {@link LeaseStep.Await} ended. */
  LeaseStep wake(Moment now) {
    requireIdle();
    return step(next(now));
  }

  /** The watch opened: it misses what changed before, so the follower reads once. */
  LeaseStep watchOpened(Moment now) {
    requireIdle();
    s.watchOpen = true;
    s.readNow = true;
    return step(next(now));
  }

  /** The watch ended for good: back to polling. */
  LeaseStep watchClosed(Moment now) {
    requireIdle();
    s.watchOpen = false;
    return step(next(now));
  }

  /**
   * A watch event that arrived at {@code arrivedNanos}: the Lease as it was then ({@code null}: deleted).
   * Taken as an observation dated at its arrival. One that arrived before the last read was sent is no newer than
   * that read's answer (the server wrote it before it served the read) and tells nothing; one that arrived while
   * the read was in flight may be older or newer than its answer, and then only a new read tells.
   */
  LeaseStep watchEvent(Moment now, long arrivedNanos, LeaseRecord record) {
    return watchEvent(now, arrivedNanos, record, false);
  }

  /**
   * {@link #watchEvent(Moment, long, LeaseRecord)}, with {@code writable} true when a write built from the record alone
   * would keep all of the Lease's metadata (a sharded runner's list and watch saw it bare): a hand-over for this
   * process is then taken in without a read; otherwise a read comes first.
   */
  LeaseStep watchEvent(Moment now, long arrivedNanos, LeaseRecord record, boolean writable) {
    requireIdle();
    if (s.role == Role.FOLLOWING && s.arrivedAfterLastReadSent(arrivedNanos)) {
      if (s.arrivedByLastReadDone(arrivedNanos)) {
        String version = record == null ? null : record.resourceVersion();
        s.readNow |= version == null || !version.equals(s.lastReadVersion);
      } else {
        s.observe(record, arrivedNanos);
        s.observedWritable = writable;
        String holder = record == null ? null : record.holder();
        if (holder != null && !holder.equals(s.identity)
            && LeaseProtocolAcquiring.attemptDueNanos(s, now.nanos()) - now.nanos() > 0) {
          s.signals.add(new LeaseStep.Following(Optional.of(holder)));
        }
      }
    }
    return step(next(now));
  }

  /** The runner closes: stop acquiring; a leader keeps renewing until {@link #finish}. */
  LeaseStep close(Moment now) {
    requireIdle();
    s.closing = true;
    return step(next(now));
  }

  /** The runner's services stopped: a leader releases ({@code release}) or leaves the Lease to expire. */
  LeaseStep finish(Moment now, boolean release) {
    requireIdle();
    finishRequested(release);
    return step(next(now));
  }

  /**
   * The runner asks to finish while a request is in flight: what {@link #finish} would do, taken into account
   * at the answer, so that a leader whose services have stopped releases at its very next decision (say, after a
   * conflict's re-read) instead of renewing once more first. Sends nothing by itself.
   */
  void finishRequested(boolean release) {
    s.closing = true;
    if (s.finish == Finish.NONE) {
      s.finish = release ? Finish.RELEASE : Finish.ABANDON;
    }
  }

  /**
   * A service could not start: give the term up as lost, releasing the Lease first when every service
   * stopped cleanly ({@code release}), else leaving it to expire.
   */
  LeaseStep relinquish(Moment now, boolean release) {
    requireIdle();
    if (s.role == Role.LEADING && !s.relinquishing) {
      s.relinquishing = true;
      s.relinquishRelease = release;
    }
    return step(next(now));
  }

  /** The term lapsed on its own clock before a renewal could extend it: it is lost. */
  LeaseStep lapsed(Moment now) {
    requireIdle();
    if (s.role != Role.LEADING) {
      return step(next(now));
    }
    return step(LeaseProtocolRenewing.lost(s, LossCause.TERM_LAPSED, Optional.empty()));
  }

  /**
   * The runner closes after a loss: it finishes as {@code afterLoss(now, false)} does, except that a loss which
   * left the Lease as this replica last wrote it (a renewal that landed after the renew deadline, or a term that
   * lapsed on its own clock) is followed by a release when every service stopped cleanly ({@code release}), so
   * that the next holder need not wait the Lease out. The release is a compare-and-set on that very write: it
   * changes nothing if anyone wrote the Lease since. A loss at the renew deadline leaves the Lease unknown (a
   * renewal whose answer never came in time may have landed): the protocol reads it first and releases only if it
   * shows this replica's own write, a compare-and-set on the read's resourceVersion.
   */
  LeaseStep finishAfterLoss(Moment now, boolean release) {
    if (s.role != Role.LOST) {
      throw new IllegalStateException("finishAfterLoss while " + s.role);
    }
    finishRequested(release);
    if (release && s.lossLeftOwnWrite) {
      s.lossLeftOwnWrite = false;
      s.releaseRetried = true; // the renew deadline has passed: a conflict is not retried
      return step(LeaseProtocolReleasing.release(s, now));
    }
    if (release && s.lossAtRenewDeadline && s.flaw != Flaw.NO_RELEASE_AFTER_DEADLINE) {
      s.lossAtRenewDeadline = false;
      return step(LeaseProtocolReleasing.checkBeforeRelease(s, now));
    }
    s.role = Role.FINISHED;
    return step(new LeaseStep.Finished());
  }

  /** The loss was handled: contend again, or finish. */
  LeaseStep afterLoss(Moment now, boolean contendAgain) {
    if (s.role != Role.LOST) {
      throw new IllegalStateException("afterLoss while " + s.role);
    }
    if (!contendAgain || s.closing) {
      s.role = Role.FINISHED;
      return step(new LeaseStep.Finished());
    }
    s.role = Role.FOLLOWING;
    s.mine = null;
    s.contendingAfterLoss();
    s.lossLeftOwnWrite = false;
    s.lossAtRenewDeadline = false;
    s.observedAny = false;
    s.observed = null;
    s.readNow = true;
    // Events that arrived during the term are older than the read that starts the new round.
    s.lastReadDone(now.nanos());
    s.lastReadVersion = null;
    if (s.lostByRelinquish) {
      s.failedTermsInARow++;
      long wait = s.retryPeriodNanos;
      for (int i = 1; i < s.failedTermsInARow && wait < s.leaseDurationNanos; i++) {
        wait *= 2;
      }
      wait = Math.min(s.leaseDurationNanos, wait);
      s.notBeforeNanos = now.nanos() + wait;
      s.backingOff = true;
      s.fact(FactKind.BACKING_OFF, Long.toString(wait / 1_000_000));
    } else {
      s.failedTermsInARow = 0;
    }
    s.lostByRelinquish = false;
    s.fact(FactKind.CONTENDING_AGAIN, "");
    return step(LeaseProtocolAcquiring.follow(s, now));
  }

  // ---- what the driver may read ------------------------------------------------------------------------

  Role role() {
    return s.role;
  }

  /**
   * The record the release of a clean close wrote (a finish while this replica led, sent before its renew
   * deadline, and accepted by the server), once the protocol finished with it; empty after any other end (a loss,
   * a lapse, a failed start, a release that failed or was never sent). A delete conditional on it removes the Lease
   * only if nobody wrote it since.
   */
  Optional<LeaseRecord> cleanlyReleased() {
    return s.role == Role.FINISHED ? Optional.ofNullable(s.cleanlyReleased) : Optional.empty();
  }

  /** The monotonic time at which the last successful Lease call was sent, if any. */
  Optional<Long> lastSuccessNanos() {
    return s.succeededOnce ? Optional.of(s.lastSuccessNanos) : Optional.empty();
  }

  /** How long a follower may go without a successful call and still count as in touch (readiness). */
  long contactWindowNanos() {
    // Only a follower whose last successful call was made while it watched reads that rarely: a leader that
    // just lost (its last success a renewal) keeps the renew deadline, even if its watch still looks open.
    return s.role == Role.FOLLOWING && s.watchOpen && s.lastSuccessWhileWatching
        ? Math.max(s.renewDeadlineNanos, s.leaseDurationNanos + s.requestTimeoutNanos) : s.renewDeadlineNanos;
  }

  // ---- dispatch -----------------------------------------------------------------------------------------

  private Action next(Moment now) {
    switch (s.role) {
      case FOLLOWING:
        return LeaseProtocolAcquiring.follow(s, now);
      case LEADING:
        return LeaseProtocolRenewing.lead(s, now);
      case LOST:
        return new LeaseStep.HandleLoss();
      default:
        return new LeaseStep.Finished();
    }
  }

  private void requireIdle() {
    if (s.pending != Pending.NONE) {
      throw new IllegalStateException("a request is in flight (" + s.pending + "): answer it first");
    }
  }

  private LeaseStep step(Action action) {
    LeaseStep step = new LeaseStep(action, s.signals);
    s.signals.clear();
    return step;
  }
}
