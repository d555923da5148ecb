package io.github.electionpolicy.fabric8;

import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.DEADLINE;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.LEASE;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.MS;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.RETRY;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.TIMEOUT;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.WALL;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.at;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.found;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.held;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.written;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.writtenRecord;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The hand-over rows of {@link LeaseProtocol}'s step table: a sharded runner's clean release that names the next
 * holder, and the successor that takes such a term in as its own with no request, dated from the send time of its own
 * membership write that the hand-over's proof names; and every case in which it must not (an unknown or stale proof, a
 * shorter lease, a lower token, a close, a term taken in before), where it waits the term out as any other holder's.
 * Timings as {@link LeaseProtocolStepTest}'s: lease 15 s, renew deadline 10 s, retry 2 s, request timeout 5 s; times
 * in milliseconds.
 */
class LeaseProtocolHandOverStepTest {

  /** The successor's membership write that made resourceVersion "55" was sent at 100 ms. */
  static final long PROOF_SENT = 100 * MS;

  final LeaseProtocol protocol = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);

  {
    protocol.handOverProofs(version -> "55".equals(version) ? OptionalLong.of(PROOF_SENT) : OptionalLong.empty());
  }

  /** A term another replica wrote for "me", token 8, with {@code proof}. */
  static LeaseRecord handOver(String proof) {
    return new LeaseRecord("me", 15, WALL, WALL, 8, "60", proof);
  }

  static LeaseStep.Elected elected(LeaseRecord record, long fromNanos) {
    return new LeaseStep.Elected(record, fromNanos + DEADLINE, Optional.empty());
  }

  /** As {@link #elected(LeaseRecord, long)}, after a sight of the Lease held by {@code previous}, whom it names. */
  static LeaseStep.Elected elected(LeaseRecord record, long fromNanos, String previous) {
    return new LeaseStep.Elected(record, fromNanos + DEADLINE, Optional.of(previous));
  }

  static LeaseStep.Fact adopted(int transitions) {
    return new LeaseStep.Fact(FactKind.HANDED_OVER_HERE, Integer.toString(transitions));
  }

  @Nested
  class TheOldOwner {

    final LeaseProtocol owner = new LeaseProtocol("old", LEASE, DEADLINE, RETRY, TIMEOUT, 42);

    /** Leads from 0 with token 7, resourceVersion "11". */
    void leading() {
      owner.start(at(0));
      LeaseStep take = owner.answer(at(0), found(new LeaseRecord(null, 1, WALL, WALL, 6, "10")));
      owner.answer(at(0), written(take, "11"));
    }

    @Test
    void aCleanReleaseGivenASuccessorWritesANewTermForItWithTheProof() {
      leading();
      owner.handOverTo("next", "55");
      owner.close(at(500));
      LeaseStep handOver = owner.finish(at(1_000), true);

      LeaseRecord record = writtenRecord(handOver);
      assertThat(record.holder()).isEqualTo("next");
      assertThat(record.leaseTransitions()).as("a new term: the token grows").isEqualTo(8);
      assertThat(record.leaseDurationSeconds()).as("a full lease, not a release's one second").isEqualTo(15);
      assertThat(record.acquireTime()).isEqualTo(record.renewTime()).isEqualTo(WALL.plusMillis(1_000));
      assertThat(record.resourceVersion()).as("a compare-and-set on its own last write").isEqualTo("11");
      assertThat(record.handOverProof()).isEqualTo("55");

      LeaseStep done = owner.answer(at(1_050), written(handOver, "12"));
      assertThat(done.action()).isInstanceOf(LeaseStep.Finished.class);
      assertThat(done.signals()).containsExactly(new LeaseStep.Fact(FactKind.HANDED_OVER, "next"));
      assertThat(owner.cleanlyReleased()).as("the successor's now: nothing may delete it").isEmpty();
    }

    @Test
    void aConflictReReadShowingItsOwnValidTermHandsOverAgainOnTheNewVersion() {
      leading();
      owner.handOverTo("next", "55");
      owner.close(at(500));
      LeaseStep handOver = owner.finish(at(1_000), true);
      LeaseStep reread = owner.answer(at(1_050), new Answer.Failed(FailureKind.CONFLICT, "409"));
      assertThat(reread.action()).isInstanceOf(LeaseStep.Read.class);

      LeaseStep again = owner.answer(at(1_100), found(new LeaseRecord("old", 15, WALL, WALL, 7, "13")));
      assertThat(writtenRecord(again).holder()).isEqualTo("next");
      assertThat(writtenRecord(again).leaseTransitions()).isEqualTo(8);
      assertThat(writtenRecord(again).resourceVersion()).isEqualTo("13");
      assertThat(writtenRecord(handOver).resourceVersion()).isEqualTo("11");
    }

    @Test
    void aReleaseAfterTheRenewDeadlineNamesNoSuccessor() {
      leading();
      owner.handOverTo("next", "55");
      owner.close(at(500));
      LeaseStep check = owner.finish(at(DEADLINE / MS + 1), true);
      assertThat(check.action()).as("read first: the term has ended").isInstanceOf(LeaseStep.Read.class);
      LeaseStep release = owner.answer(at(DEADLINE / MS + 50),
          found(new LeaseRecord("old", 15, WALL, WALL, 7, "11")));

      assertThat(writtenRecord(release).holder()).as("a plain release").isNull();
      assertThat(writtenRecord(release).handOverProof()).isNull();
    }

    @Test
    void aConflictReReadAnsweredAtTheRenewDeadlineReleasesPlainly() {
      leading();
      owner.handOverTo("next", "55");
      owner.close(at(500));
      owner.finish(at(1_000), true);
      owner.answer(at(1_050), new Answer.Failed(FailureKind.CONFLICT, "409"));

      LeaseStep again = owner.answer(at(DEADLINE / MS), found(new LeaseRecord("old", 15, WALL, WALL, 7, "13")));
      assertThat(writtenRecord(again).holder()).as("its term has ended: it has no term to hand over").isNull();
      assertThat(writtenRecord(again).leaseTransitions()).isEqualTo(7);
      assertThat(writtenRecord(again).resourceVersion()).isEqualTo("13");
    }

    @Test
    void aLeaderAtTheLastTokenReleasesPlainlyForAHandOverCouldNotCountPastIt() {
      owner.start(at(0));
      LeaseStep take = owner.answer(at(0), found(new LeaseRecord(null, 1, WALL, WALL, Integer.MAX_VALUE - 1, "10")));
      owner.answer(at(0), written(take, "11"));
      owner.handOverTo("next", "55");
      owner.close(at(500));

      LeaseRecord release = writtenRecord(owner.finish(at(1_000), true));
      assertThat(release.holder()).isNull();
      assertThat(release.leaseTransitions()).isEqualTo(Integer.MAX_VALUE);
      assertThat(release.handOverProof()).isNull();
    }

    @Test
    void aTermGivenUpAfterAFailedStartIsReleasedPlainly() {
      leading();
      owner.handOverTo("next", "55");
      LeaseStep release = owner.relinquish(at(500), true);

      assertThat(writtenRecord(release).holder()).isNull();
      assertThat(writtenRecord(release).leaseTransitions()).isEqualTo(7);
    }

    @Test
    void aSuccessorNamedAgainBeforeTheReleaseNamesTheLatestProof() {
      leading();
      owner.handOverTo("next", "55");
      owner.close(at(500));
      owner.handOverTo("next", "57");

      LeaseRecord record = writtenRecord(owner.finish(at(1_000), true));
      assertThat(record.holder()).isEqualTo("next");
      assertThat(record.handOverProof()).isEqualTo("57");
    }

    @Test
    void aSuccessorTakenBackBeforeTheReleaseLeavesAPlainRelease() {
      leading();
      owner.handOverTo("next", "55");
      owner.close(at(500));
      owner.handOverTo(null, null);

      LeaseStep release = owner.finish(at(1_000), true);
      assertThat(writtenRecord(release).holder()).isNull();
      assertThat(writtenRecord(release).leaseTransitions()).isEqualTo(7);
      assertThat(writtenRecord(release).handOverProof()).isNull();
      owner.answer(at(1_050), written(release, "12"));
      assertThat(owner.cleanlyReleased()).as("a clean release again").isPresent();
    }

    @Test
    void aSuccessorThatIsItselfIsIgnored() {
      leading();
      owner.handOverTo("old", "55");
      owner.close(at(500));

      assertThat(writtenRecord(owner.finish(at(1_000), true)).holder()).isNull();
    }

    @Test
    void itsOwnLastWritesAreKnownByTheVersionTheyMadeTheLastEightOnly() {
      leading();
      assertThat(owner.ownWriteSentNanos("11")).isEqualTo(OptionalLong.of(0));
      long sent = 0;
      for (int i = 0; i < 8; i++) {
        sent += RETRY;
        LeaseStep renewal = owner.wake(at(sent / MS));
        assertThat(renewal.action()).isInstanceOf(LeaseStep.Update.class);
        owner.answer(at(sent / MS + 10), written(renewal, "r" + i));
      }
      assertThat(owner.ownWriteSentNanos("r7")).isEqualTo(OptionalLong.of(sent));
      assertThat(owner.ownWriteSentNanos("r0")).isEqualTo(OptionalLong.of(RETRY));
      assertThat(owner.ownWriteSentNanos("11")).as("the ninth write back is forgotten").isEmpty();
      assertThat(owner.ownWriteSentNanos("nope")).isEmpty();
    }
  }

  @Nested
  class TheSuccessor {

    @Test
    void aHandOverSeenBareIsTakenInWithNoRequestDatedFromItsMembershipWrite() {
      LeaseRecord record = handOver("55");
      protocol.seen(record, 500 * MS, true);
      LeaseStep step = protocol.start(at(600));

      assertThat(step.signals()).containsExactly(adopted(8), elected(record, PROOF_SENT));
      assertThat(step.action()).as("its first renewal a retry period after the membership write")
          .isEqualTo(new LeaseStep.Await(PROOF_SENT + RETRY));
      assertThat(protocol.role()).isEqualTo(LeaseProtocol.Role.LEADING);
    }

    @Test
    void itsFirstRenewalKeepsTheTermAndDropsTheProof() {
      protocol.seen(handOver("55"), 500 * MS, true);
      protocol.start(at(600));
      LeaseStep renewal = protocol.wake(at(2_100));

      LeaseRecord record = writtenRecord(renewal);
      assertThat(record.holder()).isEqualTo("me");
      assertThat(record.leaseTransitions()).isEqualTo(8);
      assertThat(record.acquireTime()).isEqualTo(WALL);
      assertThat(record.resourceVersion()).isEqualTo("60");
      assertThat(record.handOverProof()).isNull();
      assertThat(protocol.answer(at(2_150), written(renewal, "61")).signals())
          .containsExactly(new LeaseStep.Renewed(2_100 * MS + DEADLINE, 50 * MS));
    }

    @Test
    void aHandOverSeenWithMetadataAWriteWouldDropIsReadFirstThenTakenIn() {
      LeaseRecord record = handOver("55");
      protocol.seen(record, 500 * MS, false);
      assertThat(protocol.start(at(600)).action()).isEqualTo(new LeaseStep.Read(600 * MS + TIMEOUT));

      LeaseStep step = protocol.answer(at(650), found(record));
      assertThat(step.signals()).containsExactly(adopted(8), elected(record, PROOF_SENT));
    }

    @Test
    void aHandOverReadIsTakenInOnTheAnswer() {
      assertThat(protocol.start(at(300)).action()).isInstanceOf(LeaseStep.Read.class);
      LeaseRecord record = handOver("55");

      LeaseStep step = protocol.answer(at(350), found(record));
      assertThat(step.signals()).containsExactly(adopted(8), elected(record, PROOF_SENT));
      assertThat(step.action()).isEqualTo(new LeaseStep.Await(PROOF_SENT + RETRY));
    }

    @Test
    void aHandOverAWatchShowsBareIsTakenInAndOneWithMetadataIsReadFirst() {
      protocol.start(at(0));
      protocol.answer(at(0), found(held("old", 15, 7, "50")));
      LeaseRecord record = handOver("55");

      LeaseStep read = protocol.watchEvent(at(700), 700 * MS, record, false);
      assertThat(read.action()).isInstanceOf(LeaseStep.Read.class);
      assertThat(read.signals()).isEmpty();
      assertThat(protocol.answer(at(750), found(record)).signals()).as("the holder it saw before, as it would a take's")
          .containsExactly(adopted(8), elected(record, PROOF_SENT, "old"));

      LeaseProtocol other = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
      other.handOverProofs(version -> OptionalLong.of(PROOF_SENT));
      other.start(at(0));
      other.answer(at(0), found(held("old", 15, 7, "50")));
      assertThat(other.watchEvent(at(700), 700 * MS, record, true).signals()).containsExactly(adopted(8),
          elected(record, PROOF_SENT, "old"));
    }

    @Test
    void aProofItDidNotMakeIsWaitedOutAsAnotherProcesssTermUnderItsIdentity() {
      protocol.start(at(0));
      LeaseStep step = protocol.answer(at(0), found(handOver("99")));

      assertThat(step.signals()).containsExactly(new LeaseStep.Fact(FactKind.SAME_IDENTITY_WAITING, "me"),
          new LeaseStep.Following(Optional.of("me")));
      assertThat(protocol.role()).isEqualTo(LeaseProtocol.Role.FOLLOWING);
    }

    @Test
    void aProofWhoseRenewDeadlineHasPassedIsWaitedOut() {
      protocol.start(at(0));
      long late = (PROOF_SENT + DEADLINE) / MS;
      LeaseStep step = protocol.answer(at(late), found(handOver("55")));
      assertThat(step.signals()).doesNotContain(adopted(8));
      assertThat(protocol.role()).isEqualTo(LeaseProtocol.Role.FOLLOWING);

      LeaseProtocol justInTime = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
      justInTime.handOverProofs(version -> OptionalLong.of(PROOF_SENT));
      justInTime.start(at(0));
      assertThat(justInTime.answer(at(late - 1), found(handOver("55"))).signals()).contains(adopted(8));
    }

    @Test
    void aShorterLeaseThanItsOwnIsWaitedOut() {
      protocol.start(at(0));
      LeaseStep step = protocol.answer(at(200), found(new LeaseRecord("me", 14, WALL, WALL, 8, "60", "55")));

      assertThat(step.signals()).doesNotContain(adopted(8));
      assertThat(protocol.role()).isEqualTo(LeaseProtocol.Role.FOLLOWING);
    }

    @Test
    void aTokenLowerThanOneSeenIsWaitedOut() {
      protocol.seenTransitions(9);
      protocol.start(at(0));
      LeaseStep step = protocol.answer(at(200), found(handOver("55")));

      assertThat(step.signals()).doesNotContain(adopted(8));
      assertThat(protocol.role()).isEqualTo(LeaseProtocol.Role.FOLLOWING);
    }

    @Test
    void aFollowerAskedToCloseWhileItsReadWasInFlightDeclinesTheHandOverItReads() {
      protocol.start(at(0));
      protocol.finishRequested(true);
      LeaseStep step = protocol.answer(at(50), found(handOver("55")));

      assertThat(step.signals()).as("no term: its work never starts")
          .containsExactly(new LeaseStep.Fact(FactKind.HAND_OVER_DECLINED, "8"));
      LeaseRecord release = writtenRecord(step);
      assertThat(release.holder()).isNull();
      assertThat(release.leaseTransitions()).as("the hand-over's own term, released").isEqualTo(8);
      assertThat(release.resourceVersion()).as("a compare-and-set on the hand-over").isEqualTo("60");
      LeaseStep done = protocol.answer(at(100), written(step, "61"));
      assertThat(done.action()).isInstanceOf(LeaseStep.Finished.class);
      assertThat(done.signals()).containsExactly(new LeaseStep.Fact(FactKind.RELEASED, ""));
      assertThat(protocol.cleanlyReleased()).as("not a clean close's: nothing deletes it").isEmpty();
    }

    @Test
    void aDecliningFollowerReleasesAHandOverSeenAtItsStartAndTakesNothingElse() {
      protocol.declineHandOvers();
      protocol.seen(handOver("55"), 500 * MS, true);
      LeaseStep release = protocol.start(at(600));

      assertThat(release.signals()).containsExactly(new LeaseStep.Fact(FactKind.HAND_OVER_DECLINED, "8"));
      assertThat(writtenRecord(release).holder()).isNull();

      LeaseProtocol free = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
      free.declineHandOvers();
      free.seen(new LeaseRecord(null, 1, WALL, WALL, 8, "60"), 500 * MS, true);
      assertThat(free.start(at(600)).action()).as("a free Lease is not taken: it waits for its close")
          .isEqualTo(new LeaseStep.Await(600 * MS + LEASE));
      assertThat(free.close(at(700)).action()).isInstanceOf(LeaseStep.Finished.class);
    }

    @Test
    void aDecliningFollowerReadsAHandOverWithMetadataFirstAndLeavesAStaleOneToExpire() {
      protocol.declineHandOvers();
      protocol.seen(handOver("55"), 500 * MS, false);
      assertThat(protocol.start(at(600)).action()).isEqualTo(new LeaseStep.Read(600 * MS + TIMEOUT));
      assertThat(writtenRecord(protocol.answer(at(650), found(handOver("55")))).holder()).isNull();

      LeaseProtocol late = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
      late.handOverProofs(version -> OptionalLong.of(PROOF_SENT));
      late.declineHandOvers();
      late.seen(handOver("55"), 500 * MS, true);
      assertThat(late.start(at((PROOF_SENT + DEADLINE) / MS)).action()).as("its term may be another's now")
          .isInstanceOf(LeaseStep.Await.class);
    }

    /**
     * A declining runner (closed as soon as it starts, as the driver closes each) whose read of a hand-over with
     * metadata fails reads again a retry period on, as any closing follower does, while the proof is fresh; it waited a
     * lease duration, and the replica's leave with it (review h-decline's suspicion 1).
     */
    @Test
    void aClosingDecliningFollowerWhoseReadFailedReadsAgainARetryPeriodOn() {
      protocol.declineHandOvers();
      protocol.seen(handOver("55"), 500 * MS, false);
      assertThat(protocol.start(at(600)).action()).isInstanceOf(LeaseStep.Read.class);
      protocol.finishRequested(false);
      LeaseStep failed = protocol.answer(at(650), new Answer.Failed(FailureKind.OTHER, "timeout"));

      long wake = ((LeaseStep.Await) failed.action()).untilNanos();
      assertThat(wake).as("a retry period on, with its jitter, not a lease duration")
          .isBetween(650 * MS + RETRY, 650 * MS + RETRY + RETRY / 5);
      assertThat(protocol.wake(at(wake / MS + 1)).action()).isInstanceOf(LeaseStep.Read.class);
      assertThat(writtenRecord(protocol.answer(at(wake / MS + 50), found(handOver("55")))).holder())
          .as("declined: released").isNull();
    }

    /** Not yet closing: its close may come within a lease duration, and it tries once more then. */
    @Test
    void aDecliningFollowerWhoseReadFailedBeforeItsCloseReadsAgainALeaseDurationOn() {
      protocol.declineHandOvers();
      protocol.seen(handOver("55"), 500 * MS, false);
      assertThat(protocol.start(at(600)).action()).isInstanceOf(LeaseStep.Read.class);

      LeaseStep failed = protocol.answer(at(650), new Answer.Failed(FailureKind.OTHER, "timeout"));

      assertThat(failed.action()).isEqualTo(new LeaseStep.Await(650 * MS + LEASE));
    }

    @Test
    void aProofItDidNotMakeIsNotDeclined() {
      protocol.start(at(0));
      protocol.finishRequested(true);

      LeaseStep step = protocol.answer(at(50), found(handOver("99")));
      assertThat(step.action()).as("no release: it waits, and finishes at its next wake").isInstanceOf(
          LeaseStep.Await.class);
      assertThat(protocol.wake(at(RETRY / MS * 2)).action()).as("the write it names may still be answered")
          .isInstanceOf(LeaseStep.Await.class);
      assertThat(protocol.wake(at(50 + TIMEOUT / MS)).action()).as("no answer comes later than a request timeout")
          .isInstanceOf(LeaseStep.Finished.class);
    }

    /**
     * Review h-resight ({@code SimulationShardingLateProofDecline}): a closing follower that sees a hand-over to it
     * before the answer of the membership write its proof names waits for that answer (at most a request timeout from
     * its sight), and declines the hand-over once the write is its own, instead of finishing and leaving it to expire.
     */
    @Test
    void aClosingFollowerDeclinesAHandOverWhoseProofIsAnsweredAfterItsSight() {
      boolean[] answered = {false};
      LeaseProtocol closing = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
      closing.handOverProofs(version -> answered[0] && "55".equals(version) ? OptionalLong.of(PROOF_SENT)
          : OptionalLong.empty());
      closing.declineHandOvers();
      closing.seen(handOver("55"), 500 * MS, true);
      closing.start(at(600));
      assertThat(closing.close(at(610)).action()).as("not finished: the proof's answer may come")
          .isInstanceOf(LeaseStep.Await.class);

      answered[0] = true;
      LeaseStep release = closing.watchEvent(at(700), 500 * MS, handOver("55"), true); // ShardDriver.sightedAgain
      assertThat(release.signals()).containsExactly(new LeaseStep.Fact(FactKind.HAND_OVER_DECLINED, "8"));
      assertThat(writtenRecord(release).holder()).isNull();
    }

    @Test
    void aHandOverTakenInOnceIsNotTakenInAgainAfterItsLoss() {
      LeaseRecord record = handOver("55");
      protocol.seen(record, 500 * MS, true);
      protocol.start(at(600));
      // Its renewals fail until the renew deadline: the term is lost, and it contends again.
      LeaseStep renewal = protocol.wake(at(2_100));
      protocol.answer(at(2_200), new Answer.Failed(FailureKind.OTHER, "timeout"));
      LeaseStep lost = protocol.wake(at((PROOF_SENT + DEADLINE) / MS));
      assertThat(lost.signals()).anyMatch(signal -> signal instanceof LeaseStep.Lost);
      assertThat(protocol.afterLoss(at((PROOF_SENT + DEADLINE) / MS), true).action())
          .isInstanceOf(LeaseStep.Read.class);

      LeaseStep step = protocol.answer(at((PROOF_SENT + DEADLINE) / MS + 10), found(record));
      assertThat(step.signals()).doesNotContain(adopted(8));
      assertThat(protocol.role()).isEqualTo(LeaseProtocol.Role.FOLLOWING);
      assertThat(renewal.action()).isInstanceOf(LeaseStep.Update.class);
    }

    @Test
    void aHandOverAtOrBelowATermThisProcessLedBeforeIsNotTakenInByALaterRunner() {
      protocol.ledBefore(8); // an earlier runner of this process took this very hand-over in, then let the shard go
      protocol.seen(handOver("55"), 500 * MS, true);
      LeaseStep step = protocol.start(at(600));
      assertThat(step.signals()).doesNotContain(adopted(8));
      assertThat(protocol.role()).isEqualTo(LeaseProtocol.Role.FOLLOWING);

      LeaseProtocol later = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
      later.handOverProofs(version -> OptionalLong.of(PROOF_SENT));
      later.ledBefore(7);
      later.seen(handOver("55"), 500 * MS, true);
      assertThat(later.start(at(600)).signals()).as("a newer term than any it led").contains(adopted(8));
    }

    /**
     * Review h-decline ({@code SimulationShardingDeclineReAdopt}): a runner that takes a hand-over in only to release it
     * (declining, or closing) publishes no term, yet the term counts as led, so that a later runner of the process,
     * told it ({@link LeaseProtocol#ledBefore}), does not take that hand-over in again from a view that still shows it.
     */
    @Test
    void aDeclinedHandOverCountsAsLedSoALaterRunnerDoesNotTakeItIn() {
      protocol.declineHandOvers();
      protocol.seen(handOver("55"), 500 * MS, true);
      LeaseStep release = protocol.start(at(600));
      assertThat(writtenRecord(release).holder()).isNull();
      protocol.answer(at(650), written(release, "61"));
      assertThat(protocol.highestLed()).as("the declined term").isEqualTo(8);

      LeaseProtocol later = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
      later.handOverProofs(version -> OptionalLong.of(PROOF_SENT));
      later.ledBefore(protocol.highestLed());
      later.seen(handOver("55"), 500 * MS, true); // a lagging view: the hand-over, not its release
      assertThat(later.start(at(700)).signals()).doesNotContain(adopted(8));
      assertThat(later.role()).isEqualTo(LeaseProtocol.Role.FOLLOWING);
    }

    @Test
    void withoutKnownMembershipWritesNothingIsTakenIn() {
      LeaseProtocol election = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
      election.start(at(0));

      assertThat(election.answer(at(10), found(handOver("55"))).signals()).doesNotContain(adopted(8));
      assertThat(election.role()).isEqualTo(LeaseProtocol.Role.FOLLOWING);
    }
  }

  /** The broken variants are wired: each changes exactly the row it is named for. */
  @Nested
  class BrokenVariants {

    @Test
    void datedAtSightTheTermRunsFromWhenItWasSeen() {
      LeaseProtocol flawed = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42,
          LeaseProtocol.Flaw.HAND_OVER_DATED_AT_SIGHT);
      flawed.handOverProofs(version -> OptionalLong.of(PROOF_SENT));
      LeaseRecord record = handOver("55");
      flawed.seen(record, 500 * MS, true);

      assertThat(flawed.start(at(600)).signals()).contains(elected(record, 500 * MS));
    }

    @Test
    void withoutDecliningAClosingFollowerLeavesAHandOverToExpire() {
      LeaseProtocol flawed = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42,
          LeaseProtocol.Flaw.NO_DECLINE);
      flawed.handOverProofs(version -> OptionalLong.of(PROOF_SENT));
      flawed.start(at(0));
      flawed.finishRequested(true);

      assertThat(flawed.answer(at(50), found(handOver("55"))).action()).isInstanceOf(LeaseStep.Finished.class);
    }

    @Test
    void unreadAHandOverWithMetadataIsTakenInWithoutARead() {
      LeaseProtocol flawed = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42,
          LeaseProtocol.Flaw.HAND_OVER_UNREAD);
      flawed.handOverProofs(version -> OptionalLong.of(PROOF_SENT));
      LeaseRecord record = handOver("55");
      flawed.seen(record, 500 * MS, false);

      assertThat(flawed.start(at(600)).signals()).containsExactly(adopted(8), elected(record, PROOF_SENT));
      assertThat(List.of(flawed.role())).containsExactly(LeaseProtocol.Role.LEADING);
    }
  }
}
