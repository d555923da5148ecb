package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseProtocol.Flaw;
import io.github.electionpolicy.fabric8.LeaseProtocol.Role;
import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import io.github.electionpolicy.fabric8.LeaseStep.Signal;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * Everything one {@link LeaseProtocol} remembers between inputs: its settings, its role and the request in flight,
 * what it has seen of the Lease and when, its own terms, how it is asked to end, and whether it is in touch with
 * the API server. It also keeps the bookkeeping that every rule shares: taking in an observation, counting a call
 * that succeeded or failed, and noting a fact for the log.
 *
 * <p>Pure: no thread, lock, clock or logger; the time comes in with each input. The rules that change this state
 * live beside it, one class per role: {@link LeaseProtocolAcquiring} (a follower reads and takes the Lease),
 * {@link LeaseProtocolRenewing} (a leader renews it or loses it) and {@link LeaseProtocolReleasing} (a leader lets
 * it go). Only those classes and {@link LeaseProtocol} touch its fields. Not thread-safe: one driver thread.
 */
final class LeaseProtocolState {

  /** The request in flight, named by what its answer is taken in as. */
  enum Pending { NONE, READ, TAKE, RENEW, REREAD, RELEASE, RELEASE_REREAD, RELEASE_CHECK }

  /**
   * The most renewals in doubt kept: without a write known to land, a term is lost at its renew deadline, so it
   * sends at most renewDeadline / retryPeriod + 1 of them; the bound only keeps a flawed variant's list small.
   */
  static final int RENEWALS_IN_DOUBT = 16;

  /** How the runner asked the protocol to end a term: not yet, by releasing, or by leaving it to expire. */
  enum Finish { NONE, RELEASE, ABANDON }

  final String identity;
  final long leaseDurationNanos;
  final int leaseDurationSeconds;
  final long renewDeadlineNanos;
  final long retryPeriodNanos;
  final long requestTimeoutNanos;
  final SplittableRandom random;
  final Flaw flaw;
  // The send times of this process's own membership writes, by the resourceVersion each made (a sharded runner's):
  // what a hand-over naming this process is dated from. None for an election.
  OwnWrites membershipWrites = OwnWrites.NONE;

  Role role = Role.FOLLOWING;
  Pending pending = Pending.NONE;
  long pendingSentNanos;
  final List<Signal> signals = new ArrayList<>();

  // What this follower last observed: the record (null when missing), and when it last changed.
  boolean observedAny;
  LeaseRecord observed;
  // A write built from the observed record alone keeps the Lease's metadata: it came from this process's own call (the
  // transport keeps the Lease as answered), or from a list and watch that saw it bare. A hand-over is taken in unread
  // only then; otherwise it is read first (LeaseProtocolAcquiring.handOver).
  boolean observedWritable = true;
  long observedNanos;
  java.time.Instant observedWall;
  String lastHolder;
  long lastHolderDurationNanos;
  long highestTransitions = -1;
  boolean readNow = true;
  boolean watchOpen;
  // When the last read that answered was sent (set with readOnce) and when it, or the end of a term, was done
  // (lastReadDoneKnown): unset, they are no time at all. 0 is no "never" on a clock whose origin is arbitrary
  // (System.nanoTime may read negative): compared with it, a sighting before the first read that answered was dropped
  // on such a clock (SimulationShardingRunnerReadAfterOutage).
  long lastReadSentNanos;
  long lastReadDoneNanos;
  boolean lastReadDoneKnown;
  String lastReadVersion;
  boolean readOnce;
  // LeaseProtocol.seen showed the Lease free: the first step takes it without a read of its own.
  boolean seenFree;
  // A leader was asked to renew at its next wake, not a retry period after its last attempt (a sharded member's
  // leaving mark goes out with a renewal).
  boolean renewSoon;
  int failuresInARow;
  boolean warnedOfSameIdentity;
  Optional<String> takingFrom = Optional.empty();
  // The last holder seen other than this process (null: none yet): whom a hand-over came from, for its log line.
  String lastOtherHolder;

  // This process's terms.
  LeaseRecord mine;
  // The last hand-over this process took in as its own term: never taken in twice.
  LeaseRecord adopted;
  // The highest leaseTransitions of a term of this Lease that this process led before, with an earlier protocol (a
  // sharded runner's earlier runner of the shard): a hand-over at or below it is that term, or older, never taken in.
  long ledBefore = -1;
  // The highest leaseTransitions of a term this protocol held as a leader, if only to release it (a declined hand-over):
  // what a later runner of the same process is told as its ledBefore.
  long highestLed = -1;
  // The send time and resourceVersion of this process's latest successful writes (takes and renewals), newest last:
  // what another replica's hand-over names as its proof when this is a membership Lease.
  static final int WRITES_KEPT = 8;
  final long[] writtenSentNanos = new long[WRITES_KEPT];
  final String[] writtenVersions = new String[WRITES_KEPT];
  int writesCounted;
  // A clean release names this successor as the next holder (a sharded runner's hand-over), with the resourceVersion
  // of its membership Lease last seen as the proof; null: a plain release.
  String successor;
  String successorProof;
  LeaseRecord lastWritten;
  // A take whose answer never came: the server may have applied it, and then the Lease shows this term.
  LeaseRecord lastAttempted;
  LeaseRecord takeInFlight;
  long lastRenewSentNanos;
  long lastAttemptNanos;
  boolean releaseRetried;
  // The renewal in flight, and the ones sent since the last write known to have landed whose answer never told
  // (no answer in time, a connection cut, a 5xx): the server may have applied any one of them. They are all
  // conditional on the same resourceVersion (mine's), so at most one did.
  LeaseRecord renewalInFlight;
  final List<LeaseRecord> renewalsInDoubt = new ArrayList<>();
  // The renewals of a lost term still in doubt when this process contends again: the Lease showing one of them is this
  // process's own last term, to take back at once (LeaseProtocolAcquiring#isOwnLastTerm), not another's to wait out.
  final List<LeaseRecord> lostTermDoubts = new ArrayList<>();

  boolean closing;
  // Runs only to release a hand-over naming this process, never to take or lead (LeaseProtocol.declineHandOvers).
  boolean declineOnly;
  Finish finish = Finish.NONE;
  boolean relinquishing;
  boolean relinquishRelease;
  boolean lostByRelinquish;
  // The release under way is a clean close's: a finish while leading, sent before the renew deadline (not after a
  // loss, a lapse or a failed start). Only such a release may be followed by a delete (see cleanlyReleased).
  boolean cleanRelease;
  // The record a clean close's release wrote, as the server stored it; null until then.
  LeaseRecord cleanlyReleased;
  // The last loss left the Lease as this replica last wrote it: a renewal landed after the renew deadline, or
  // the term lapsed on its own clock. A close after such a loss may release it (see finishAfterLoss).
  boolean lossLeftOwnWrite;
  // The last loss came at the renew deadline: the Lease may still show this replica's last known write, or one of
  // its renewals in doubt. A close after such a loss reads the Lease first (see finishAfterLoss).
  boolean lossAtRenewDeadline;
  int failedTermsInARow;
  long notBeforeNanos;
  boolean backingOff;

  long lastSuccessNanos;
  boolean succeededOnce;
  boolean lastSuccessWhileWatching;

  LeaseProtocolState(String identity, long leaseDurationNanos, long renewDeadlineNanos, long retryPeriodNanos,
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

  // ---- observations -------------------------------------------------------------------------------------

  /** A read was answered, or a term ended, at {@code t}: an event that arrived by then is no newer. */
  void lastReadDone(long t) {
    lastReadDoneNanos = t;
    lastReadDoneKnown = true;
  }

  /** Whether an event that arrived at {@code arrivedNanos} came after the last read that answered was sent, if any. */
  boolean arrivedAfterLastReadSent(long arrivedNanos) {
    return !readOnce || arrivedNanos - lastReadSentNanos > 0;
  }

  /** Whether an event that arrived at {@code arrivedNanos} came by the time of {@link #lastReadDone}, if any. */
  boolean arrivedByLastReadDone(long arrivedNanos) {
    return lastReadDoneKnown && arrivedNanos - lastReadDoneNanos <= 0;
  }

  /** Notes the record seen ({@code null}: the Lease does not exist) and when it last changed. */
  void observe(LeaseRecord record, long t) {
    observe(record, t, null);
  }

  void observe(LeaseRecord record, long t, java.time.Instant wall) {
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
      observedWritable = true;
      if (record != null && record.leaseDurationSeconds() != null
          && record.leaseDurationSeconds() > LeaseProtocol.LONG_LEASE_SECONDS && !record.heldBy(identity)) {
        fact(FactKind.LONG_LEASE_DURATION, record.holder() + " " + record.leaseDurationSeconds());
      }
    }
    if (record != null) {
      if (record.holder() != null && !record.holder().isEmpty() && !record.heldBy(identity)) {
        lastOtherHolder = record.holder();
      }
      lastHolder = record.holder();
      lastHolderDurationNanos = durationNanos(record);
      highestTransitions = Math.max(highestTransitions, record.transitions());
    }
  }

  /** The holder's lease duration as it wrote it; this process's own when unset or not positive. */
  long durationNanos(LeaseRecord record) {
    Integer seconds = record.leaseDurationSeconds();
    return seconds == null || seconds <= 0 ? leaseDurationNanos : seconds * 1_000_000_000L;
  }

  // ---- this process's writes ----------------------------------------------------------------------------

  /** Notes a write the server applied, sent at {@code sentNanos}, and the resourceVersion it made. */
  void written(LeaseRecord record, long sentNanos) {
    if (record != null && record.resourceVersion() != null) {
      int slot = writesCounted++ % WRITES_KEPT;
      writtenSentNanos[slot] = sentNanos;
      writtenVersions[slot] = record.resourceVersion();
    }
  }

  /** When the write that made {@code resourceVersion} was sent, if it was one of the last few this process made. */
  java.util.OptionalLong writeSentNanos(String resourceVersion) {
    for (int i = 0; i < Math.min(writesCounted, WRITES_KEPT); i++) {
      if (resourceVersion.equals(writtenVersions[i])) {
        return java.util.OptionalLong.of(writtenSentNanos[i]);
      }
    }
    return java.util.OptionalLong.empty();
  }

  /** The renewal in flight got an answer that does not tell whether the server applied it. */
  void renewalInDoubt() {
    if (renewalInFlight != null) {
      if (renewalsInDoubt.size() == RENEWALS_IN_DOUBT) {
        renewalsInDoubt.remove(0);
      }
      renewalsInDoubt.add(renewalInFlight);
    }
    renewalInFlight = null;
  }

  /** This term's last write is known ({@code mine}): no earlier renewal is in doubt any more. */
  void writeKnown() {
    renewalInFlight = null;
    renewalsInDoubt.clear();
    lostTermDoubts.clear();
  }

  /**
   * A lost term is over and this process contends again: no renewal is in flight; those in doubt (and the one in flight,
   * whose answer will not be heard) are kept as {@link #lostTermDoubts}, unless the term was left to expire because a
   * service may still run (no last write then: it is waited out like any other holder's).
   */
  void contendingAfterLoss() {
    renewalInDoubt();
    List<LeaseRecord> doubts = lastWritten == null ? List.of() : List.copyOf(renewalsInDoubt);
    writeKnown();
    lostTermDoubts.addAll(doubts);
  }

  /**
   * Whether {@code current} says exactly what this replica last wrote in this term, or what one of its renewals
   * in doubt would have written: then no one else wrote the Lease since, and it is this replica's to release.
   */
  boolean showsOwnWrite(LeaseRecord current) {
    if (current == null || mine == null || !current.heldBy(identity) || !current.sameTerm(mine)) {
      return false;
    }
    if (current.sameContent(mine)) {
      return true;
    }
    for (LeaseRecord attempted : renewalsInDoubt) {
      if (current.sameContent(attempted)) {
        return true;
      }
    }
    return false;
  }

  // ---- contact with the API server ----------------------------------------------------------------------

  /** Notes a successful call, dated when it was sent: time in flight never counts as time in touch. */
  void succeeded(long sentNanos) {
    lastSuccessNanos = sentNanos;
    succeededOnce = true;
    lastSuccessWhileWatching = role == Role.FOLLOWING && watchOpen;
    if (failuresInARow > 0) {
      failuresInARow = 0;
      fact(FactKind.REACHABLE_AGAIN, "");
    }
  }

  void failed(String failure) {
    fact(failuresInARow++ == 0 ? FactKind.UNREACHABLE : FactKind.STILL_UNREACHABLE, failure);
  }

  void fact(FactKind kind, String detail) {
    signals.add(new LeaseStep.Fact(kind, detail));
  }

  /** The wall time written into a record: microseconds, as the API server stores a MicroTime. */
  static java.time.Instant wall(Moment now) {
    return now.wall().truncatedTo(ChronoUnit.MICROS);
  }
}
