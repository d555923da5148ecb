package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Action;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import io.github.electionpolicy.fabric8.LeaseStep.LossCause;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import io.github.electionpolicy.fabric8.LeaseStep.Signal;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;

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
 *   <li>Release writes an empty holder and leaseDurationSeconds = 1, and only while the term is still valid.
 * </ul>
 *
 * <p>Not thread-safe: one driver thread feeds it.
 */
final class LeaseProtocol {

  /** The longest lease duration taken without a {@link FactKind#LONG_LEASE_DURATION} note. */
  static final long LONG_LEASE_SECONDS = 3600;

  enum Role { FOLLOWING, LEADING, LOST, FINISHED }

  private enum Pending { NONE, READ, TAKE, RENEW, REREAD, RELEASE, RELEASE_REREAD }

  private enum Finish { NONE, RELEASE, ABANDON }

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
    NO_TRANSITION_INCREMENT
  }

  private final String identity;
  private final long leaseDurationNanos;
  private final int leaseDurationSeconds;
  private final long renewDeadlineNanos;
  private final long retryPeriodNanos;
  private final long requestTimeoutNanos;
  private final SplittableRandom random;
  private final Flaw flaw;

  private Role role = Role.FOLLOWING;
  private Pending pending = Pending.NONE;
  private long pendingSentNanos;
  private final List<Signal> signals = new ArrayList<>();

  // What this follower last observed: the record (null when missing), and when it last changed.
  private boolean observedAny;
  private LeaseRecord observed;
  private long observedNanos;
  private java.time.Instant observedWall;
  private String lastHolder;
  private long lastHolderDurationNanos;
  private long highestTransitions = -1;
  private boolean readNow = true;
  private boolean watchOpen;
  private long lastReadSentNanos;
  private long lastReadDoneNanos;
  private String lastReadVersion;
  private boolean readOnce;
  private int failuresInARow;
  private boolean warnedOfSameIdentity;
  private Optional<String> takingFrom = Optional.empty();

  // This process's terms.
  private LeaseRecord mine;
  private LeaseRecord lastWritten;
  // A take whose answer never came: the server may have applied it, and then the Lease shows this term.
  private LeaseRecord lastAttempted;
  private LeaseRecord takeInFlight;
  private long lastRenewSentNanos;
  private long lastAttemptNanos;
  private boolean releaseRetried;

  private boolean closing;
  private Finish finish = Finish.NONE;
  private boolean relinquishing;
  private boolean relinquishRelease;
  private boolean lostByRelinquish;
  // The last loss left the Lease as this replica last wrote it: a renewal landed after the renew deadline, or
  // the term lapsed on its own clock. A close after such a loss may release it (see finishAfterLoss).
  private boolean lossLeftOwnWrite;
  private int failedTermsInARow;
  private long notBeforeNanos;
  private boolean backingOff;

  private long lastSuccessNanos;
  private boolean succeededOnce;
  private boolean lastSuccessWhileWatching;

  LeaseProtocol(String identity, long leaseDurationNanos, long renewDeadlineNanos, long retryPeriodNanos,
      long requestTimeoutNanos, long seed) {
    this(identity, leaseDurationNanos, renewDeadlineNanos, retryPeriodNanos, requestTimeoutNanos, seed, Flaw.NONE);
  }

  LeaseProtocol(String identity, long leaseDurationNanos, long renewDeadlineNanos, long retryPeriodNanos,
      long requestTimeoutNanos, long seed, Flaw flaw) {
    this.flaw = flaw;
    this.identity = identity;
    this.leaseDurationNanos = leaseDurationNanos;
    this.leaseDurationSeconds = (int) Math.min(Integer.MAX_VALUE, Math.max(1, leaseDurationNanos / 1_000_000_000L));
    this.renewDeadlineNanos = renewDeadlineNanos;
    this.retryPeriodNanos = retryPeriodNanos;
    this.requestTimeoutNanos = requestTimeoutNanos;
    this.random = new SplittableRandom(seed);
  }

  // ---- inputs -------------------------------------------------------------------------------------------

  /** The first step: a follower reads the Lease. */
  LeaseStep start(Moment now) {
    return step(follow(now));
  }

  /** The answer to the request that the last step asked for (a read, a create or an update). */
  LeaseStep answer(Moment now, Answer answer) {
    Pending was = pending;
    pending = Pending.NONE;
    switch (was) {
      case READ:
        return step(readAnswered(now, answer));
      case TAKE:
        return step(takeAnswered(now, answer));
      case RENEW:
        return step(renewAnswered(now, answer));
      case REREAD:
        return step(rereadAnswered(now, answer));
      case RELEASE:
        return step(releaseAnswered(now, answer));
      case RELEASE_REREAD:
        return step(releaseRereadAnswered(now, answer));
      default:
        throw new IllegalStateException("no request in flight, yet an answer came: " + answer);
    }
  }

  /** The wait of the last {@link LeaseStep.Await} ended. */
  LeaseStep wake(Moment now) {
    requireIdle();
    return step(next(now));
  }

  /** The watch opened: it misses what changed before, so the follower reads once. */
  LeaseStep watchOpened(Moment now) {
    requireIdle();
    watchOpen = true;
    readNow = true;
    return step(next(now));
  }

  /** The watch ended for good: back to polling. */
  LeaseStep watchClosed(Moment now) {
    requireIdle();
    watchOpen = false;
    return step(next(now));
  }

  /**
   * A watch event that arrived at {@code arrivedNanos}: the Lease as it was then ({@code null}: deleted).
   * Taken as an observation dated at its arrival; one that arrived while a read was in flight may be older
   * or newer than the read's answer, and then only a new read tells.
   */
  LeaseStep watchEvent(Moment now, long arrivedNanos, LeaseRecord record) {
    requireIdle();
    if (role == Role.FOLLOWING) {
      if (arrivedNanos - lastReadDoneNanos <= 0) {
        String version = record == null ? null : record.resourceVersion();
        readNow |= version == null || !version.equals(lastReadVersion);
      } else {
        observe(record, arrivedNanos);
        String holder = record == null ? null : record.holder();
        if (holder != null && !holder.equals(identity) && attemptDueNanos(now.nanos()) - now.nanos() > 0) {
          signals.add(new LeaseStep.Following(Optional.of(holder)));
        }
      }
    }
    return step(next(now));
  }

  /** The runner closes: stop acquiring; a leader keeps renewing until {@link #finish}. */
  LeaseStep close(Moment now) {
    requireIdle();
    closing = true;
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
    closing = true;
    if (finish == Finish.NONE) {
      finish = release ? Finish.RELEASE : Finish.ABANDON;
    }
  }

  /**
   * A service could not start: give the term up as lost, releasing the Lease first when every service
   * stopped cleanly ({@code release}), else leaving it to expire.
   */
  LeaseStep relinquish(Moment now, boolean release) {
    requireIdle();
    if (role == Role.LEADING && !relinquishing) {
      relinquishing = true;
      relinquishRelease = release;
    }
    return step(next(now));
  }

  /** The term lapsed on its own clock before a renewal could extend it: it is lost. */
  LeaseStep lapsed(Moment now) {
    requireIdle();
    if (role != Role.LEADING) {
      return step(next(now));
    }
    return step(lost(LossCause.TERM_LAPSED, Optional.empty()));
  }

  /**
   * The runner closes after a loss: it finishes as {@code afterLoss(now, false)} does, except that a loss which
   * left the Lease as this replica last wrote it (a renewal that landed after the renew deadline, or a term that
   * lapsed on its own clock) is followed by a release when every service stopped cleanly ({@code release}), so
   * that the next holder need not wait the Lease out. The release is a compare-and-set on that very write: it
   * changes nothing if anyone wrote the Lease since.
   */
  LeaseStep finishAfterLoss(Moment now, boolean release) {
    if (role != Role.LOST) {
      throw new IllegalStateException("finishAfterLoss while " + role);
    }
    finishRequested(release);
    if (release && lossLeftOwnWrite) {
      lossLeftOwnWrite = false;
      releaseRetried = true; // the renew deadline has passed: a conflict is not retried
      return step(release(now));
    }
    role = Role.FINISHED;
    return step(new LeaseStep.Finished());
  }

  /** The loss was handled: contend again, or finish. */
  LeaseStep afterLoss(Moment now, boolean contendAgain) {
    if (role != Role.LOST) {
      throw new IllegalStateException("afterLoss while " + role);
    }
    if (!contendAgain || closing) {
      role = Role.FINISHED;
      return step(new LeaseStep.Finished());
    }
    role = Role.FOLLOWING;
    mine = null;
    observedAny = false;
    observed = null;
    readNow = true;
    // Events that arrived during the term are older than the read that starts the new round.
    lastReadDoneNanos = now.nanos();
    lastReadVersion = null;
    if (lostByRelinquish) {
      failedTermsInARow++;
      long wait = retryPeriodNanos;
      for (int i = 1; i < failedTermsInARow && wait < leaseDurationNanos; i++) {
        wait *= 2;
      }
      wait = Math.min(leaseDurationNanos, wait);
      notBeforeNanos = now.nanos() + wait;
      backingOff = true;
      fact(FactKind.BACKING_OFF, Long.toString(wait / 1_000_000));
    } else {
      failedTermsInARow = 0;
    }
    lostByRelinquish = false;
    fact(FactKind.CONTENDING_AGAIN, "");
    return step(follow(now));
  }

  // ---- what the driver may read ------------------------------------------------------------------------

  Role role() {
    return role;
  }

  /** The monotonic time at which the last successful Lease call was sent, if any. */
  Optional<Long> lastSuccessNanos() {
    return succeededOnce ? Optional.of(lastSuccessNanos) : Optional.empty();
  }

  /** How long a follower may go without a successful call and still count as in touch (readiness). */
  long contactWindowNanos() {
    // Only a follower whose last successful call was made while it watched reads that rarely: a leader that
    // just lost (its last success a renewal) keeps the renew deadline, even if its watch still looks open.
    return role == Role.FOLLOWING && watchOpen && lastSuccessWhileWatching
        ? Math.max(renewDeadlineNanos, leaseDurationNanos + requestTimeoutNanos) : renewDeadlineNanos;
  }

  // ---- following ----------------------------------------------------------------------------------------

  private Action next(Moment now) {
    switch (role) {
      case FOLLOWING:
        return follow(now);
      case LEADING:
        return lead(now);
      case LOST:
        return new LeaseStep.HandleLoss();
      default:
        return new LeaseStep.Finished();
    }
  }

  private long readPeriodNanos() {
    return watchOpen ? leaseDurationNanos : retryPeriodNanos;
  }

  private Action follow(Moment now) {
    if (closing) {
      role = Role.FINISHED;
      return new LeaseStep.Finished();
    }
    long t = now.nanos();
    if (backingOff) {
      if (t - notBeforeNanos < 0) {
        return new LeaseStep.Await(notBeforeNanos);
      }
      backingOff = false;
      readNow = true;
    }
    if (readNow || !watchOpen || !readOnce || t - (lastReadSentNanos + readPeriodNanos()) >= 0
        || t - attemptDueNanos(t) >= 0) {
      readNow = false;
      pending = Pending.READ;
      pendingSentNanos = t;
      return new LeaseStep.Read(t + requestTimeoutNanos);
    }
    return awaitAsFollower(t);
  }

  private Action awaitAsFollower(long t) {
    long wake;
    if (failuresInARow > 0 || !watchOpen) {
      long jitter = (long) (retryPeriodNanos * 0.2 * random.nextDouble());
      wake = t + retryPeriodNanos + jitter;
    } else {
      wake = lastReadSentNanos + readPeriodNanos();
    }
    if (failuresInARow == 0) {
      // Try exactly when the holder's lease runs out, not at the next tick after it.
      long due = attemptDueNanos(t);
      if (due - t <= 0) {
        due = t + retryPeriodNanos;
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
  private long attemptDueNanos(long t) {
    if (!observedAny) {
      return t;
    }
    if (observed == null) {
      boolean heldByAnother = lastHolder != null && !lastHolder.equals(identity);
      return heldByAnother ? observedNanos + lastHolderDurationNanos : t;
    }
    String holder = observed.holder();
    if (holder == null || holder.equals(identity) && isOwnLastTerm(observed)) {
      return t;
    }
    long duration = durationNanos(observed);
    if (flaw == Flaw.EARLY_TAKEOVER) {
      return observedNanos + duration - retryPeriodNanos;
    }
    if (flaw == Flaw.REMOTE_RENEW_TIME && observed.renewTime() != null && observedWall != null) {
      return observedNanos + java.time.Duration.between(observedWall, observed.renewTime()).toNanos() + duration;
    }
    return observedNanos + duration;
  }

  /**
   * Whether a record naming this identity is this process's own last term, left by it: exactly what its last
   * confirmed write stored (same term and resourceVersion, so a restored copy of an older record does not
   * count), or the term of a take whose answer never came (the server may have applied it).
   */
  private boolean isOwnLastTerm(LeaseRecord record) {
    boolean lastWrite = record.sameTerm(lastWritten) && lastWritten.resourceVersion() != null
        && lastWritten.resourceVersion().equals(record.resourceVersion());
    return lastWrite || record.sameTerm(lastAttempted);
  }

  private Action readAnswered(Moment now, Answer answer) {
    long t = now.nanos();
    if (answer instanceof Answer.Failed failed) {
      failed(failed.failure());
      return awaitAsFollower(t);
    }
    succeeded(pendingSentNanos);
    readOnce = true;
    lastReadSentNanos = pendingSentNanos;
    lastReadDoneNanos = t;
    LeaseRecord current = answer instanceof Answer.Found found ? found.record() : null;
    if (current == null && !(answer instanceof Answer.Missing)) {
      throw new IllegalArgumentException("a read answers Found, Missing or Failed, not " + answer);
    }
    lastReadVersion = current == null ? null : current.resourceVersion();
    observe(current, t, now.wall());
    if (attemptDueNanos(t) - t > 0) {
      // A Lease deleted under its holder may still be led: wait out the holder's lease duration.
      String holder = current == null ? lastHolder : current.holder();
      if (current != null && current.heldBy(identity) && !warnedOfSameIdentity) {
        warnedOfSameIdentity = true;
        fact(FactKind.SAME_IDENTITY_WAITING, identity);
      }
      signals.add(new LeaseStep.Following(Optional.ofNullable(holder)));
      return awaitAsFollower(t);
    }
    // Every new term counts as a transition, even one taken back from this process's own earlier term:
    // leaseTransitions then tells any two terms apart, which fencing relies on.
    if (highestTransitions >= Integer.MAX_VALUE && (current == null || current.transitions() < Integer.MAX_VALUE)) {
      // An exhausted token was reset by an operator (the Lease deleted, or its count lowered), as the
      // TOKEN_EXHAUSTED error asks: count on from the Lease, not from the exhausted maximum.
      highestTransitions = current == null ? -1 : current.transitions();
      fact(FactKind.TOKEN_RESET, Long.toString(highestTransitions + 1));
    }
    long base = Math.max(highestTransitions, current == null ? -1 : current.transitions());
    if (base >= Integer.MAX_VALUE) {
      fact(FactKind.TOKEN_EXHAUSTED, Long.toString(base));
      signals.add(new LeaseStep.Following(Optional.ofNullable(current == null ? null : current.holder())));
      return new LeaseStep.Await(t + leaseDurationNanos);
    }
    takingFrom = Optional.ofNullable(current == null ? null : current.holder());
    long transitions = flaw == Flaw.NO_TRANSITION_INCREMENT ? Math.max(0, base) : base + 1;
    LeaseRecord taken = new LeaseRecord(identity, leaseDurationSeconds, wall(now), wall(now), (int) transitions,
        current == null ? null : current.resourceVersion());
    pending = Pending.TAKE;
    pendingSentNanos = t;
    takeInFlight = taken;
    return current == null ? new LeaseStep.Create(taken, t + requestTimeoutNanos)
        : new LeaseStep.Update(taken, t + requestTimeoutNanos);
  }

  private Action takeAnswered(Moment now, Answer answer) {
    long sent = pendingSentNanos;
    if (answer instanceof Answer.Written written) {
      succeeded(sent);
      LeaseRecord record = written.record();
      observe(record, now.nanos());
      mine = record;
      lastWritten = record;
      lastAttempted = null;
      lastRenewSentNanos = sent;
      lastAttemptNanos = sent;
      role = Role.LEADING;
      releaseRetried = false;
      signals.add(new LeaseStep.Elected(record, sent + renewDeadlineNanos, takingFrom));
      return lead(now);
    }
    LeaseStep.Answer.Failed failed = (Answer.Failed) answer;
    if (failed.kind() != FailureKind.OTHER) {
      // Another replica wrote first, or the Lease went away: read again at once.
      succeeded(sent);
      readNow = true;
      return follow(now);
    }
    lastAttempted = takeInFlight;
    failed(failed.failure());
    // The take failed without naming a holder: this process follows, whoever (if anyone) leads.
    signals.add(new LeaseStep.Following(Optional.empty()));
    return awaitAsFollower(now.nanos());
  }

  // ---- leading ------------------------------------------------------------------------------------------

  private Action lead(Moment now) {
    long t = now.nanos();
    long deadline = lastRenewSentNanos + renewDeadlineNanos;
    if (relinquishing) {
      if (relinquishRelease && t - deadline < 0) {
        return release(now);
      }
      // Left to expire because a service may still run: this process must wait it out like any other
      // holder's term, instead of taking its own last term back at once.
      lastWritten = null;
      lastAttempted = null;
      return lost(LossCause.START_FAILED, Optional.empty());
    }
    if (finish == Finish.RELEASE) {
      if (t - deadline < 0) {
        return release(now);
      }
      role = Role.FINISHED;
      return new LeaseStep.Finished();
    }
    if (finish == Finish.ABANDON) {
      fact(FactKind.ABANDONED, "");
      role = Role.FINISHED;
      return new LeaseStep.Finished();
    }
    if (t - deadline >= 0 && flaw != Flaw.IGNORE_RENEW_DEADLINE) {
      return lost(LossCause.RENEW_DEADLINE, Optional.empty());
    }
    long nextAttempt = lastAttemptNanos + retryPeriodNanos;
    if (t - nextAttempt < 0) {
      // Wake at the deadline if it comes first: a loss is seen when it happens, not a retry period later.
      return new LeaseStep.Await(nextAttempt - deadline < 0 || flaw == Flaw.IGNORE_RENEW_DEADLINE
          ? nextAttempt : deadline);
    }
    lastAttemptNanos = t;
    pending = Pending.RENEW;
    pendingSentNanos = t;
    LeaseRecord renewal = new LeaseRecord(identity, leaseDurationSeconds, mine.acquireTime(), wall(now),
        mine.leaseTransitions(), mine.resourceVersion());
    return new LeaseStep.Update(renewal, flaw == Flaw.IGNORE_RENEW_DEADLINE ? t + requestTimeoutNanos : deadline);
  }

  private Action renewAnswered(Moment now, Answer answer) {
    long t = now.nanos();
    long sent = pendingSentNanos;
    if (answer instanceof Answer.Written written) {
      succeeded(sent);
      mine = written.record();
      lastWritten = mine;
      observe(mine, t);
      if (t - (lastRenewSentNanos + renewDeadlineNanos) >= 0 && flaw != Flaw.IGNORE_RENEW_DEADLINE) {
        // The term lapsed before the answer came: its services may have seen it invalid, so it must not
        // become valid again.
        return lost(LossCause.LATE_RENEWAL, Optional.of(identity));
      }
      lastRenewSentNanos = sent;
      signals.add(new LeaseStep.Renewed(sent + renewDeadlineNanos, t - sent));
      return lead(now);
    }
    Answer.Failed failed = (Answer.Failed) answer;
    signals.add(new LeaseStep.RenewFailed(failed.failure(), t - lastRenewSentNanos));
    if (failed.kind() == FailureKind.NOT_FOUND) {
      // Deleted: a follower may create it anew, so this term cannot go on.
      succeeded(sent);
      observe(null, t);
      return lost(LossCause.DELETED, Optional.empty());
    }
    if (failed.kind() == FailureKind.CONFLICT) {
      succeeded(sent);
      long deadline = lastRenewSentNanos + renewDeadlineNanos;
      if (t - deadline >= 0) {
        return lost(LossCause.RENEW_DEADLINE, Optional.empty());
      }
      pending = Pending.REREAD;
      pendingSentNanos = t;
      return new LeaseStep.Read(deadline);
    }
    fact(FactKind.RENEWAL_FAILED, failed.failure());
    return lead(now);
  }

  private Action rereadAnswered(Moment now, Answer answer) {
    long t = now.nanos();
    if (answer instanceof Answer.Failed failed) {
      signals.add(new LeaseStep.RenewFailed(failed.failure(), t - lastRenewSentNanos));
      return lead(now);
    }
    succeeded(pendingSentNanos);
    LeaseRecord current = answer instanceof Answer.Found found ? found.record() : null;
    observe(current, t);
    if (current == null) {
      return lost(LossCause.DELETED, Optional.empty());
    }
    if (!current.heldBy(identity)) {
      return lost(LossCause.TAKEN, Optional.ofNullable(current.holder()));
    }
    if (!current.sameTerm(mine)) {
      return lost(LossCause.SAME_IDENTITY, Optional.of(identity));
    }
    // Still ours (a foreign write moved the resourceVersion): renew again at once.
    mine = current;
    lastWritten = current;
    lastAttemptNanos = t - retryPeriodNanos;
    return lead(now);
  }

  private Action lost(LossCause cause, Optional<String> holder) {
    role = Role.LOST;
    relinquishing = false;
    lostByRelinquish = cause == LossCause.START_FAILED;
    lossLeftOwnWrite = (cause == LossCause.LATE_RENEWAL || cause == LossCause.TERM_LAPSED) && mine != null
        && mine.heldBy(identity);
    signals.add(new LeaseStep.Lost(cause, holder));
    if (cause == LossCause.TAKEN || cause == LossCause.DELETED) {
      signals.add(new LeaseStep.Following(holder));
    }
    return new LeaseStep.HandleLoss();
  }

  // ---- releasing ----------------------------------------------------------------------------------------

  private Action release(Moment now) {
    long t = now.nanos();
    pending = Pending.RELEASE;
    pendingSentNanos = t;
    LeaseRecord released = new LeaseRecord(null, 1, wall(now), wall(now), mine.leaseTransitions(),
        mine.resourceVersion());
    return new LeaseStep.Update(released, t + requestTimeoutNanos);
  }

  private Action releaseAnswered(Moment now, Answer answer) {
    if (answer instanceof Answer.Written written) {
      succeeded(pendingSentNanos);
      observe(written.record(), now.nanos());
      fact(FactKind.RELEASED, "");
      return afterRelease();
    }
    Answer.Failed failed = (Answer.Failed) answer;
    if (failed.kind() == FailureKind.CONFLICT && !releaseRetried) {
      releaseRetried = true;
      succeeded(pendingSentNanos);
      pending = Pending.RELEASE_REREAD;
      pendingSentNanos = now.nanos();
      return new LeaseStep.Read(now.nanos() + requestTimeoutNanos);
    }
    fact(FactKind.RELEASE_FAILED, failed.failure());
    return afterRelease();
  }

  private Action releaseRereadAnswered(Moment now, Answer answer) {
    if (answer instanceof Answer.Found found && found.record().heldBy(identity) && found.record().sameTerm(mine)
        && now.nanos() - (lastRenewSentNanos + renewDeadlineNanos) < 0) {
      succeeded(pendingSentNanos);
      mine = found.record();
      return release(now);
    }
    if (answer instanceof Answer.Failed failed) {
      fact(FactKind.RELEASE_FAILED, failed.failure());
    }
    return afterRelease();
  }

  private Action afterRelease() {
    if (relinquishing) {
      return lost(LossCause.START_FAILED, Optional.empty());
    }
    role = Role.FINISHED;
    return new LeaseStep.Finished();
  }

  // ---- observations -------------------------------------------------------------------------------------

  /** Notes the record seen ({@code null}: the Lease does not exist) and when it last changed. */
  private void observe(LeaseRecord record, long t) {
    observe(record, t, null);
  }

  private void observe(LeaseRecord record, long t, java.time.Instant wall) {
    boolean changed = !observedAny || (record == null ? observed != null : !record.sameContent(observed));
    if (changed) {
      // Never earlier than a change already seen: an event taken in after a read may be older than the read,
      // and dating the change back would judge the holder's lease expired too soon.
      if (!observedAny || t - observedNanos > 0) {
        observedNanos = t;
        observedWall = wall;
      }
      observedAny = true;
      observed = record;
      if (record != null && record.leaseDurationSeconds() != null
          && record.leaseDurationSeconds() > LONG_LEASE_SECONDS && !record.heldBy(identity)) {
        fact(FactKind.LONG_LEASE_DURATION, record.holder() + " " + record.leaseDurationSeconds());
      }
    }
    if (record != null) {
      lastHolder = record.holder();
      lastHolderDurationNanos = durationNanos(record);
      highestTransitions = Math.max(highestTransitions, record.transitions());
    }
  }

  /** The holder's lease duration as it wrote it; this process's own when unset or not positive. */
  private long durationNanos(LeaseRecord record) {
    Integer seconds = record.leaseDurationSeconds();
    return seconds == null || seconds <= 0 ? leaseDurationNanos : seconds * 1_000_000_000L;
  }

  /** Notes a successful call, dated when it was sent: time in flight never counts as time in touch. */
  private void succeeded(long sentNanos) {
    lastSuccessNanos = sentNanos;
    succeededOnce = true;
    lastSuccessWhileWatching = role == Role.FOLLOWING && watchOpen;
    if (failuresInARow > 0) {
      failuresInARow = 0;
      fact(FactKind.REACHABLE_AGAIN, "");
    }
  }

  private void failed(String failure) {
    fact(failuresInARow++ == 0 ? FactKind.UNREACHABLE : FactKind.STILL_UNREACHABLE, failure);
  }

  private void fact(FactKind kind, String detail) {
    signals.add(new LeaseStep.Fact(kind, detail));
  }

  private void requireIdle() {
    if (pending != Pending.NONE) {
      throw new IllegalStateException("a request is in flight (" + pending + "): answer it first");
    }
  }

  private LeaseStep step(Action action) {
    LeaseStep step = new LeaseStep(action, signals);
    signals.clear();
    return step;
  }

  private static java.time.Instant wall(Moment now) {
    return now.wall().truncatedTo(ChronoUnit.MICROS);
  }
}
