package io.github.electionpolicy.fabric8;

import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.DEADLINE;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.LEASE;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.MS;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.RETRY;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.TIMEOUT;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.WALL;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.at;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.failed;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.found;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.held;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.written;
import static io.github.electionpolicy.fabric8.LeaseProtocolStepTest.writtenRecord;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import io.github.electionpolicy.fabric8.LeaseStep.LossCause;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link LeaseProtocol} at the edges {@code LeaseProtocolStepTest} leaves open: the exact time of every request
 * and wake-up, the dating of successful calls (readiness reads it), the facts the log lines come from, watch
 * events on either side of a read, boundaries where a rule flips, a monotonic clock that reads negative, and the
 * deliberate defects the simulation must catch (each does what it says, so a broken variant is really broken).
 * Written against PIT's survivors: each test pins a behaviour that no other pure test observed. Same timings as
 * {@code LeaseProtocolStepTest}: lease 15 s, renew deadline 10 s, retry 2 s, request timeout 5 s.
 */
class LeaseProtocolStepEdgesTest {

  static final LeaseRecord FREE = new LeaseRecord(null, 1, WALL, WALL, 6, "10");

  final LeaseProtocol protocol = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);

  static LeaseStep.Elected elected(LeaseStep step) {
    return (LeaseStep.Elected) step.signals().stream().filter(LeaseStep.Elected.class::isInstance).findFirst()
        .orElseThrow();
  }

  static long awaitMillis(LeaseStep step) {
    assertThat(step.action()).isInstanceOf(LeaseStep.Await.class);
    return ((LeaseStep.Await) step.action()).untilNanos() / MS;
  }

  /** Leader at 0: took a free Lease (transitions 7, version 11); its deadline is 10 s. */
  LeaseStep leaderAtZero() {
    protocol.start(at(0));
    LeaseStep take = protocol.answer(at(0), found(FREE));
    return protocol.answer(at(0), written(take, "11"));
  }

  /**
   * A follower that saw the Lease before it started ({@link LeaseProtocol#seen}: a sharded runner's list and watch):
   * the same content on its first read is judged from that sight, other content from the read.
   */
  @Nested
  class SeenBeforeStart {

    final LeaseProtocol protocol = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
    final LeaseRecord crashed = held("other", 15, 3, "20");

    @Test
    void theSameContentOnTheFirstReadIsTakenALeaseDurationAfterItWasFirstSeen() {
      protocol.seen(crashed, 0);
      protocol.start(at(14_000));

      LeaseStep step = protocol.answer(at(14_000), found(crashed));
      assertThat(step.action()).isEqualTo(new LeaseStep.Await(15_000 * MS));

      step = protocol.wake(at(15_000));
      assertThat(step.action()).isEqualTo(new LeaseStep.Read(15_000 * MS + TIMEOUT));
      step = protocol.answer(at(15_000), found(crashed));
      assertThat(step.action()).isInstanceOf(LeaseStep.Update.class);
      assertThat(writtenRecord(step).leaseTransitions()).isEqualTo(4);
    }

    @Test
    void aRenewalSinceTheSightStartsTheWaitFromTheReadThatShowsIt() {
      protocol.seen(crashed, 0);
      protocol.start(at(14_000));

      LeaseRecord renewed = new LeaseRecord("other", 15, WALL.minusSeconds(3600), WALL, 3, "21");
      LeaseStep step = protocol.answer(at(14_000), found(renewed));
      assertThat(step.action()).isInstanceOf(LeaseStep.Await.class);
      assertThat(((LeaseStep.Await) step.action()).untilNanos()).isGreaterThan(15_000 * MS);
      assertThat(step.signals()).contains(new LeaseStep.Following(java.util.Optional.of("other")));
    }

    @Test
    void aLeaseSeenFreeIsTakenByTheFirstStepWithTheSeenVersionAsItsPrecondition() {
      protocol.seen(FREE, 0);

      LeaseStep step = protocol.start(at(5));

      assertThat(step.action()).isInstanceOf(LeaseStep.Update.class);
      LeaseRecord taken = writtenRecord(step);
      assertThat(taken.holder()).isEqualTo("me");
      assertThat(taken.resourceVersion()).as("the precondition").isEqualTo(FREE.resourceVersion());
      assertThat(taken.leaseTransitions()).isEqualTo(FREE.leaseTransitions() + 1);
      assertThat(protocol.answer(at(6), written(step, "11")).signals())
          .anyMatch(LeaseStep.Elected.class::isInstance);
    }

    @Test
    void aConflictOnTheTakeOfASeenFreeLeaseReadsAtOnce() {
      protocol.seen(FREE, 0);
      protocol.start(at(5));

      LeaseStep step = protocol.answer(at(6), failed(FailureKind.CONFLICT));

      assertThat(step.action()).isEqualTo(new LeaseStep.Read(6 * MS + TIMEOUT));
      LeaseRecord heldSince = held("other", 15, 7, "12");
      assertThat(protocol.answer(at(7), found(heldSince)).action()).as("then follows what the read shows")
          .isInstanceOf(LeaseStep.Await.class);
    }

    @Test
    void aLeaseSeenFreeWithoutAVersionIsReadFirst() {
      protocol.seen(FREE.withResourceVersion(null), 0);

      assertThat(protocol.start(at(5)).action()).isEqualTo(new LeaseStep.Read(5 * MS + TIMEOUT));
    }

    @Test
    void aLeaseSeenFreeWhoseWriteNeedsARead() {
      protocol.seen(FREE, 0, false); // its metadata holds what a write from the record alone would drop

      assertThat(protocol.start(at(5)).action()).isEqualTo(new LeaseStep.Read(5 * MS + TIMEOUT));
    }

    @Test
    void aLeaseSeenHeldIsReadFirst() {
      protocol.seen(crashed, 0);

      assertThat(protocol.start(at(5)).action()).isEqualTo(new LeaseStep.Read(5 * MS + TIMEOUT));
    }

    // LeaseProtocol.seenTransitions (a count seen before the Lease was deleted), on every path that writes a new term.

    @Test
    void aCountSeenBeforeStartIsCountedPastOnACreateAfterAMissingRead() {
      protocol.seenTransitions(7);
      protocol.start(at(0));
      LeaseStep take = protocol.answer(at(1), new Answer.Missing());
      assertThat(((LeaseStep.Create) take.action()).record().transitions()).isEqualTo(8);
    }

    @Test
    void aCountSeenBeforeStartIsCountedPastOnATakeOfAFreeRecordSeenUnread() {
      protocol.seen(FREE, 0);
      protocol.seenTransitions(9);
      LeaseStep take = protocol.start(at(0));
      assertThat(((LeaseStep.Update) take.action()).record().transitions()).isEqualTo(10);
    }

    @Test
    void aCountSeenBeforeStartIsCountedPastOnATakeOfAnExpiredRecord() {
      protocol.seen(crashed, 0);
      protocol.seenTransitions(7);
      protocol.start(at(15_000));
      LeaseStep take = protocol.answer(at(15_001), found(crashed));
      assertThat(((LeaseStep.Update) take.action()).record().transitions()).isEqualTo(8);
    }

    @Test
    void aCountSeenBeforeStartIsCountedPastAfterAConflictsReRead() {
      protocol.seenTransitions(7);
      protocol.start(at(0));
      protocol.answer(at(1), new Answer.Missing());
      LeaseStep reread = protocol.answer(at(2), failed(FailureKind.CONFLICT));
      assertThat(reread.action()).isInstanceOf(LeaseStep.Read.class);
      LeaseStep take = protocol.answer(at(3), found(new LeaseRecord(null, 1, WALL, WALL, 0, "30")));
      assertThat(((LeaseStep.Update) take.action()).record().transitions()).isEqualTo(8);
    }

    @Test
    void aLowerCountSeenBeforeStartLowersNothingAndIsForBeforeStartOnly() {
      protocol.seenTransitions(-1);
      protocol.start(at(0));
      assertThatThrownBy(() -> protocol.seenTransitions(3)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("before start");
      LeaseStep take = protocol.answer(at(1), found(FREE));
      assertThat(((LeaseStep.Update) take.action()).record().transitions()).isEqualTo(7);
    }

    @Test
    void aSightIsForBeforeStartOnly() {
      protocol.start(at(0));
      assertThatThrownBy(() -> protocol.seen(crashed, 0)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("before start");
    }
  }

  @Nested
  class Guards {

    @Test
    void everyInputButTheAnswerIsRefusedWhileARequestIsInFlight() {
      protocol.start(at(0));
      List<Consumer<LeaseProtocol>> inputs = List.of(
          p -> p.wake(at(1)), p -> p.watchOpened(at(1)), p -> p.watchClosed(at(1)),
          p -> p.watchEvent(at(1), MS, FREE), p -> p.close(at(1)), p -> p.finish(at(1), true),
          p -> p.relinquish(at(1), true), p -> p.lapsed(at(1)));

      for (Consumer<LeaseProtocol> input : inputs) {
        assertThatThrownBy(() -> input.accept(protocol)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("in flight");
      }
      assertThat(protocol.answer(at(2), found(FREE)).action()).isInstanceOf(LeaseStep.Update.class);
    }

    @Test
    void decliningIsRefusedOnceARequestWasSentOrAReadAnswered() {
      protocol.start(at(0));
      assertThatThrownBy(protocol::declineHandOvers).isInstanceOf(IllegalStateException.class)
          .hasMessage("declineHandOvers() is for before start");

      protocol.answer(at(0), found(held("other", 15, 3, "10")));
      assertThatThrownBy(protocol::declineHandOvers).as("idle, but it has read").isInstanceOf(
          IllegalStateException.class);
    }

    @Test
    void aReadAnsweredAsIfItWereAWriteIsRefused() {
      protocol.start(at(0));

      assertThatThrownBy(() -> protocol.answer(at(1), new Answer.Written(FREE)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a read answers");
    }

    @Test
    void afterLossIsRefusedUnlessLeadershipWasLost() {
      assertThatThrownBy(() -> protocol.afterLoss(at(0), true)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("FOLLOWING");
    }

    @Test
    void aLostLeaderWaitsForTheLossToBeHandledAndAFinishedOneStaysFinished() {
      leaderAtZero();
      protocol.lapsed(at(1_000));

      assertThat(protocol.wake(at(2_000))).isEqualTo(new LeaseStep(new LeaseStep.HandleLoss(), List.of()));
      protocol.afterLoss(at(2_000), false);
      assertThat(protocol.wake(at(3_000))).isEqualTo(new LeaseStep(new LeaseStep.Finished(), List.of()));
      assertThat(protocol.lapsed(at(3_000))).isEqualTo(new LeaseStep(new LeaseStep.Finished(), List.of()));
    }
  }

  @Nested
  class Following {

    /**
     * FINDING 3 (h-attack3). A create answered 404 (its namespace is missing: deleted, or misspelt in the
     * settings) led to a read at once, which found the Lease missing and created it again at once: a loop with
     * no wait, as fast as the API server answers, in every replica. A POST 404s only when nothing can be created
     * there: it is a failed take, retried after a retry period as any other.
     */
    @Test
    void aCreateAnsweredNotFoundWaitsARetryPeriodBeforeTheNextRead() {
      protocol.start(at(0));
      assertThat(protocol.answer(at(0), new Answer.Missing()).action()).isInstanceOf(LeaseStep.Create.class);

      LeaseStep step = protocol.answer(at(10), failed(FailureKind.NOT_FOUND));

      assertThat(awaitMillis(step)).isGreaterThanOrEqualTo(10 + RETRY / MS);
    }

    /** An update 404s when the Lease went away after the read: read again at once, and create it. */
    @Test
    void aTakeOverAnsweredNotFoundReadsAgainAtOnceAndCountsAsContact() {
      protocol.start(at(0));
      assertThat(protocol.answer(at(5), found(FREE)).action()).isInstanceOf(LeaseStep.Update.class);

      LeaseStep step = protocol.answer(at(10), failed(FailureKind.NOT_FOUND));

      assertThat(step.action()).isEqualTo(new LeaseStep.Read(10 * MS + TIMEOUT));
      assertThat(protocol.lastSuccessNanos()).as("the take, sent at 5").contains(5 * MS);
      assertThat(protocol.answer(at(20), new Answer.Missing()).action()).isInstanceOf(LeaseStep.Create.class);
    }

    @Test
    void aFirstSuccessfulReadSaysOnlyWhoHoldsTheLeaseEvenForAnHourLongLease() {
      protocol.start(at(0));

      LeaseStep step = protocol.answer(at(0), found(held("other", 3600, 3, "10")));

      // Not "reachable again" (nothing failed before), not "long" (an hour is the longest that is not).
      assertThat(step.signals()).containsExactly(new LeaseStep.Following(Optional.of("other")));
    }

    @Test
    void theTakeIsAnsweredByOneRequestTimeoutAfterItWasSent() {
      protocol.start(at(0));
      LeaseStep create = protocol.answer(at(700), new Answer.Missing());
      LeaseProtocol other = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
      other.start(at(0));
      LeaseStep update = other.answer(at(700), found(FREE));

      assertThat(create.action()).isEqualTo(new LeaseStep.Create(writtenRecord(create), 5_700 * MS));
      assertThat(update.action()).isEqualTo(new LeaseStep.Update(writtenRecord(update), 5_700 * MS));
    }

    @Test
    void aPollWaitsARetryPeriodAndItsJitterFromTheAnswerNotFromTheRequest() {
      protocol.start(at(0));

      assertThat(awaitMillis(protocol.answer(at(500), found(held("other", 15, 3, "10"))))).isBetween(2_500L, 2_900L);
    }

    @Test
    void aFailedReadPollsAgainAfterARetryPeriodAndItsJitterEvenWithTheWatchOpen() {
      protocol.start(at(0));
      protocol.answer(at(0), found(held("other", 15, 3, "10")));
      protocol.watchOpened(at(0));

      long wake = awaitMillis(protocol.answer(at(100), failed(FailureKind.OTHER)));

      assertThat(wake).isBetween(2_100L, 2_500L);
    }

    @Test
    void aHolderWhoseLeaseDurationIsNotPositiveIsWaitedOutForThisProcesssOwn() {
      for (int seconds : new int[] {0, -5}) {
        LeaseProtocol follower = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
        follower.start(at(0));
        LeaseStep first = follower.answer(at(0), found(held("other", seconds, 3, "10")));
        follower.wake(at(14_999));
        LeaseStep before = follower.answer(at(14_999), found(held("other", seconds, 3, "10")));
        follower.wake(at(15_000));
        LeaseStep due = follower.answer(at(15_000), found(held("other", seconds, 3, "10")));

        assertThat(first.action()).as("%d s", seconds).isInstanceOf(LeaseStep.Await.class);
        assertThat(before.action()).as("%d s", seconds).isEqualTo(new LeaseStep.Await(15_000 * MS));
        assertThat(due.action()).as("%d s", seconds).isInstanceOf(LeaseStep.Update.class);
      }
    }

    @Test
    void aTakeWhoseAnswerWasLostCountsAsItsOwnTermWhenTheLeaseShowsIt() {
      protocol.start(at(0));
      LeaseStep take = protocol.answer(at(0), found(FREE));
      LeaseRecord applied = writtenRecord(take).withResourceVersion("11");
      long wake = awaitMillis(protocol.answer(at(100), failed(FailureKind.OTHER)));

      protocol.wake(at(wake));
      LeaseStep retake = protocol.answer(at(wake), found(applied));

      assertThat(retake.action()).isInstanceOf(LeaseStep.Update.class);
      assertThat(writtenRecord(retake).leaseTransitions()).isEqualTo(8);
      assertThat(writtenRecord(retake).resourceVersion()).isEqualTo("11");
    }

    @Test
    void aFailedTakeSaysTheServerIsUnreachableAndFollowsNobodyInParticular() {
      protocol.start(at(0));
      protocol.answer(at(0), found(FREE));

      LeaseStep step = protocol.answer(at(300), failed(FailureKind.OTHER));

      assertThat(step.signals()).containsExactly(new LeaseStep.Fact(FactKind.UNREACHABLE, "OTHER in a test"),
          new LeaseStep.Following(Optional.empty()));
      assertThat(awaitMillis(step)).isBetween(2_300L, 2_700L);
    }

    @Test
    void anExhaustedTokenWaitsALeaseDurationAndSaysSoOnlyOnce() {
      protocol.start(at(0));
      protocol.answer(at(0), found(held("other", 15, Integer.MAX_VALUE, "10")));
      protocol.wake(at(15_000));

      LeaseStep step = protocol.answer(at(15_000), found(held("other", 15, Integer.MAX_VALUE, "10")));

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Await(30_000 * MS), List.of(
          new LeaseStep.Fact(FactKind.TOKEN_EXHAUSTED, "2147483647"),
          new LeaseStep.Following(Optional.of("other")))));
    }

    @Test
    void anExhaustedTokenResetByDeletingTheLeaseCountsOnFromZero() {
      protocol.start(at(0));
      protocol.answer(at(0), found(held("other", 15, Integer.MAX_VALUE, "10")));
      protocol.wake(at(15_000));
      LeaseStep deleted = protocol.answer(at(15_000), new Answer.Missing());
      protocol.wake(at(30_000));

      LeaseStep step = protocol.answer(at(30_000), new Answer.Missing());

      // The holder of the deleted Lease is waited out first, then counting starts again.
      assertThat(awaitMillis(deleted)).isLessThanOrEqualTo(30_000L);
      assertThat(step.signals()).contains(new LeaseStep.Fact(FactKind.TOKEN_RESET, "0"));
      assertThat(step.action()).isInstanceOf(LeaseStep.Create.class);
      assertThat(writtenRecord(step).leaseTransitions()).isZero();
    }

    @Test
    void anExhaustedTokenLoweredByAnOperatorCountsOnFromTheLease() {
      protocol.start(at(0));
      protocol.answer(at(0), found(held("other", 15, Integer.MAX_VALUE, "10")));
      protocol.wake(at(15_000));
      protocol.answer(at(15_000), found(held("other", 15, 5, "11")));
      protocol.wake(at(30_000));

      LeaseStep step = protocol.answer(at(30_000), found(held("other", 15, 5, "11")));

      assertThat(step.signals()).contains(new LeaseStep.Fact(FactKind.TOKEN_RESET, "6"));
      assertThat(writtenRecord(step).leaseTransitions()).isEqualTo(6);
    }

    @Test
    void aSuccessfulCallIsDatedWhenItWasSent() {
      protocol.start(at(0));
      protocol.answer(at(100), found(FREE)); // the read was sent at 0; the take is sent at 100
      protocol.answer(at(300), failed(FailureKind.CONFLICT));
      assertThat(protocol.lastSuccessNanos()).as("a conflict answers too").contains(100 * MS);
    }

    @Test
    void aWonTakeIsDatedWhenItWasSent() {
      protocol.start(at(0));
      LeaseStep take = protocol.answer(at(100), found(FREE));

      protocol.answer(at(300), written(take, "11"));

      assertThat(protocol.lastSuccessNanos()).contains(100 * MS);
    }
  }

  @Nested
  class Watching {

    /** Follows "other" (version 10, seen at 0) with the watch open; the watch's read was answered at 100. */
    void watching() {
      protocol.start(at(0));
      protocol.answer(at(0), found(held("other", 15, 3, "10")));
      assertThat(protocol.watchOpened(at(0)).action()).isInstanceOf(LeaseStep.Read.class);
      protocol.answer(at(100), found(held("other", 15, 3, "10")));
    }

    @Test
    void anEventOfAnotherVersionThatArrivedBeforeTheReadsAnswerForcesAnotherRead() {
      watching();

      LeaseStep step = protocol.watchEvent(at(200), 50 * MS, held("other", 15, 3, "9"));

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Read(5_200 * MS), List.of()));
    }

    @Test
    void aDeletionThatArrivedBeforeTheReadsAnswerForcesAnotherRead() {
      watching();

      LeaseStep step = protocol.watchEvent(at(200), 50 * MS, null);

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Read(5_200 * MS), List.of()));
    }

    /**
     * The server wrote what an event shows before it sent the event, so one that arrived before the read was sent
     * is no newer than the read's answer: another read would tell nothing (found by the simulation: such a read,
     * after a conflict's re-read, was the eleventh call of a window).
     */
    @Test
    void anEventThatArrivedBeforeTheReadWasSentIsOlderThanItsAnswer() {
      watching();

      assertThat(protocol.watchEvent(at(200), 0, held("other", 15, 3, "9")))
          .isEqualTo(new LeaseStep(new LeaseStep.Await(15_000 * MS), List.of()));
      assertThat(protocol.watchEvent(at(201), -MS, null))
          .isEqualTo(new LeaseStep(new LeaseStep.Await(15_000 * MS), List.of()));
    }

    /** As above, for a read sent after the start of the clock: the event is compared with the read's send time. */
    @Test
    void anEventThatArrivedBeforeALaterReadWasSentTellsNothingEither() {
      protocol.start(at(0));
      protocol.answer(at(0), found(held("other", 15, 3, "10")));
      assertThat(protocol.watchOpened(at(1_000)).action()).isEqualTo(new LeaseStep.Read(6_000 * MS));
      protocol.answer(at(1_100), found(held("other", 15, 3, "10")));

      assertThat(protocol.watchEvent(at(1_200), 500 * MS, held("other", 15, 3, "9")))
          .isEqualTo(new LeaseStep(new LeaseStep.Await(15_000 * MS), List.of()));
    }

    @Test
    void anEventOfTheReadsVersionThatArrivedWhenTheAnswerDidIsAlreadyKnown() {
      watching();
      LeaseRecord sameVersion = new LeaseRecord("other", 15, WALL.minusSeconds(3600), WALL, 3, "10");

      LeaseStep step = protocol.watchEvent(at(200), 100 * MS, sameVersion);

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Await(15_000 * MS), List.of()));
    }

    @Test
    void anEventOfANewHolderSaysWhoIsFollowedAndWaitsOutItsLease() {
      watching();

      LeaseStep step = protocol.watchEvent(at(2_000), 2_000 * MS, held("new", 15, 4, "12"));

      // The safety-net read (15 s after the last read was sent) comes before the new holder's term ends (17 s).
      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Await(15_000 * MS),
          List.of(new LeaseStep.Following(Optional.of("new")))));
    }

    @Test
    void anEventWhoseHolderIsAlreadyDueIsTriedAtOnceWithoutFollowingIt() {
      watching();

      LeaseStep step = protocol.watchEvent(at(16_000), 1_000 * MS, held("new", 15, 4, "12"));

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Read(21_000 * MS), List.of()));
    }

    @Test
    void aDeletionSeenOnTheWatchIsWaitedOutForTheLastHolder() {
      watching();

      LeaseStep step = protocol.watchEvent(at(1_000), 1_000 * MS, null);
      protocol.wake(at(15_000));
      LeaseStep read = protocol.answer(at(15_000), new Answer.Missing());

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Await(15_000 * MS), List.of()));
      assertThat(read.action()).isEqualTo(new LeaseStep.Await(16_000 * MS));
    }

    @Test
    void eventsTakenInOutOfOrderNeverDateAChangeBackwards() {
      watching();
      LeaseRecord renewed = new LeaseRecord("other", 15, WALL.minusSeconds(3600), WALL, 3, "12");
      protocol.watchEvent(at(5_000), 5_000 * MS,
          new LeaseRecord("other", 15, WALL.minusSeconds(3600), WALL.plusSeconds(5), 3, "11"));
      protocol.watchEvent(at(5_001), 4_000 * MS, renewed);

      protocol.wake(at(15_000));
      LeaseStep step = protocol.answer(at(15_000), found(renewed));

      // The change is dated at the latest arrival seen (5 s), not at the older event's 4 s.
      assertThat(step.action()).isEqualTo(new LeaseStep.Await(20_000 * MS));
    }

    @Test
    void aClosedWatchGoesBackToPollingWithARead() {
      watching();

      assertThat(protocol.watchClosed(at(1_000))).isEqualTo(new LeaseStep(new LeaseStep.Read(6_000 * MS), List.of()));
    }
  }

  @Nested
  class Leading {

    @Test
    void aLeaderAskedToRenewSoonRenewsAtItsNextWakeThenEveryRetryPeriodFromThere() {
      leaderAtZero();
      protocol.renewSoon();

      LeaseStep renew = protocol.wake(at(300));
      assertThat(renew.action()).isInstanceOf(LeaseStep.Update.class);
      assertThat(writtenRecord(renew).renewTime()).isEqualTo(WALL.plusMillis(300));
      LeaseStep renewed = protocol.answer(at(350), written(renew, "12"));
      assertThat(renewed.action()).isEqualTo(new LeaseStep.Await(2_300 * MS));
    }

    @Test
    void aRenewSoonWithARenewalInFlightIsSentRightAfterItsAnswer() {
      leaderAtZero();
      LeaseStep renew = protocol.wake(at(2_000));
      protocol.renewSoon();

      LeaseStep next = protocol.answer(at(2_100), written(renew, "12"));
      assertThat(next.action()).isInstanceOf(LeaseStep.Update.class);
      assertThat(writtenRecord(next).renewTime()).isEqualTo(WALL.plusMillis(2_100));
    }

    @Test
    void aRenewSoonIsIgnoredByAFollower() {
      LeaseStep read = protocol.start(at(0));
      assertThat(read.action()).isInstanceOf(LeaseStep.Read.class);
      protocol.answer(at(0), found(held("other", 15, 3, "10")));
      protocol.renewSoon();
      assertThat(protocol.wake(at(2_000)).action()).isInstanceOf(LeaseStep.Read.class);
    }

    @Test
    void aRenewalIsDatedWhenItWasSent() {
      leaderAtZero();
      LeaseStep renew = protocol.wake(at(2_000));

      protocol.answer(at(2_100), written(renew, "12"));

      assertThat(protocol.lastSuccessNanos()).contains(2_000 * MS);
    }

    @Test
    void aLateRenewalIsALossToHandle() {
      leaderAtZero();
      LeaseStep renew = protocol.wake(at(2_000));

      assertThat(protocol.answer(at(10_000), written(renew, "12")).action()).isInstanceOf(LeaseStep.HandleLoss.class);
    }

    @Test
    void aFailedRenewalSaysHowLongSinceTheLastRenewalAndKeepsTrying() {
      leaderAtZero();
      protocol.answer(at(2_000), written(protocol.wake(at(2_000)), "12"));
      protocol.wake(at(4_000));

      LeaseStep step = protocol.answer(at(4_100), failed(FailureKind.OTHER));

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Await(6_000 * MS), List.of(
          new LeaseStep.RenewFailed("OTHER in a test", 2_100 * MS),
          new LeaseStep.Fact(FactKind.RENEWAL_FAILED, "OTHER in a test"))));
    }

    @Test
    void aLeaseDeletedUnderTheLeaderIsALossThatFollowsNobodyAndCountsAsContact() {
      leaderAtZero();
      protocol.wake(at(2_000));

      LeaseStep step = protocol.answer(at(2_100), failed(FailureKind.NOT_FOUND));

      assertThat(step.action()).isInstanceOf(LeaseStep.HandleLoss.class);
      assertThat(step.signals()).contains(new LeaseStep.Lost(LossCause.DELETED, Optional.empty()),
          new LeaseStep.Following(Optional.empty()));
      assertThat(protocol.lastSuccessNanos()).contains(2_000 * MS);
    }

    @Test
    void afterItsLeaseWasDeletedTheFormerLeaderCreatesItAtOnceWhoeverHeldItBefore() {
      // It took the Lease over from "other": after the deletion no term of "other" can still run.
      protocol.start(at(0));
      protocol.answer(at(0), found(held("other", 15, 3, "10")));
      protocol.wake(at(15_000));
      LeaseStep take = protocol.answer(at(15_000), found(held("other", 15, 3, "10")));
      protocol.answer(at(15_000), written(take, "11"));
      protocol.wake(at(17_000));
      protocol.answer(at(17_000), failed(FailureKind.NOT_FOUND));
      protocol.afterLoss(at(17_000), true);

      LeaseStep step = protocol.answer(at(17_000), new Answer.Missing());

      assertThat(step.action()).isInstanceOf(LeaseStep.Create.class);
      assertThat(writtenRecord(step).leaseTransitions()).isEqualTo(5);
    }

    @Test
    void aConflictCountsAsContactAndOneAnsweredAtTheDeadlineIsALoss() {
      leaderAtZero();
      protocol.wake(at(2_000));
      LeaseStep early = protocol.answer(at(2_050), failed(FailureKind.CONFLICT));
      assertThat(protocol.lastSuccessNanos()).contains(2_000 * MS);
      assertThat(early.action()).isEqualTo(new LeaseStep.Read(DEADLINE));

      LeaseProtocol late = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
      late.start(at(0));
      late.answer(at(0), written(late.answer(at(0), found(FREE)), "11"));
      late.wake(at(2_000));
      LeaseStep step = late.answer(at(10_000), failed(FailureKind.CONFLICT));

      assertThat(step.action()).isInstanceOf(LeaseStep.HandleLoss.class);
      assertThat(step.signals()).contains(new LeaseStep.Lost(LossCause.RENEW_DEADLINE, Optional.empty()));
    }

    @Test
    void aFailedRereadAfterAConflictKeepsTryingUntilTheDeadline() {
      leaderAtZero();
      protocol.answer(at(2_000), written(protocol.wake(at(2_000)), "12"));
      protocol.wake(at(4_000));
      protocol.answer(at(4_050), failed(FailureKind.CONFLICT));

      LeaseStep step = protocol.answer(at(4_100), failed(FailureKind.OTHER));

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Await(6_000 * MS),
          List.of(new LeaseStep.RenewFailed("OTHER in a test", 2_100 * MS))));
    }

    @Test
    void aRereadIsDatedWhenItWasSent() {
      leaderAtZero();
      protocol.wake(at(2_000));
      protocol.answer(at(2_050), failed(FailureKind.CONFLICT));

      protocol.answer(at(2_100), found(held("intruder", 15, 8, "20")));

      assertThat(protocol.lastSuccessNanos()).contains(2_050 * MS);
    }

    @Test
    void everyLossTheRereadShowsIsHandled() {
      List<LeaseStep.Answer> answers = List.of(new Answer.Missing(), found(held("intruder", 15, 8, "20")),
          found(held("me", 15, 9, "31")));
      List<LossCause> causes = List.of(LossCause.DELETED, LossCause.TAKEN, LossCause.SAME_IDENTITY);
      for (int i = 0; i < answers.size(); i++) {
        LeaseProtocol leader = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
        leader.start(at(0));
        leader.answer(at(0), written(leader.answer(at(0), found(FREE)), "11"));
        leader.wake(at(2_000));
        leader.answer(at(2_050), failed(FailureKind.CONFLICT));

        LeaseStep step = leader.answer(at(2_100), answers.get(i));

        LossCause cause = causes.get(i);
        assertThat(step.action()).as("%s", cause).isInstanceOf(LeaseStep.HandleLoss.class);
        assertThat(step.signals()).as("%s", cause).anySatisfy(signal -> assertThat(signal)
            .isInstanceOfSatisfying(LeaseStep.Lost.class, lost -> assertThat(lost.cause()).isEqualTo(cause)));
      }
    }

    @Test
    void aLeaderThatLostToAnotherWaitsOutThatHoldersTermEvenIfTheLeaseIsThenDeleted() {
      leaderAtZero();
      protocol.wake(at(2_000));
      protocol.answer(at(2_050), failed(FailureKind.CONFLICT));
      protocol.answer(at(2_100), found(held("intruder", 15, 8, "20")));
      protocol.afterLoss(at(2_100), true);

      LeaseStep step = protocol.answer(at(2_100), new Answer.Missing());
      protocol.wake(at(17_100));
      LeaseStep due = protocol.answer(at(17_100), new Answer.Missing());

      assertThat(step.signals()).contains(new LeaseStep.Following(Optional.of("intruder")));
      assertThat(awaitMillis(step)).isLessThanOrEqualTo(17_100L);
      assertThat(writtenRecord(due).leaseTransitions()).as("above the intruder's count").isEqualTo(9);
    }

    @Test
    void aFailedReadAfterALossReadsAgainAtTheNextPollNotAtTheFormerHoldersExpiry() {
      leaderAtZero();
      protocol.watchOpened(at(100));
      protocol.wake(at(2_000));
      protocol.answer(at(2_050), failed(FailureKind.CONFLICT));
      protocol.answer(at(2_100), found(held("intruder", 15, 8, "20")));
      protocol.afterLoss(at(2_100), true);
      long wake = awaitMillis(protocol.answer(at(2_100), failed(FailureKind.OTHER)));

      // Nothing is known of the Lease in this new round: the failed read is retried, not waited out.
      assertThat(protocol.wake(at(wake))).isEqualTo(new LeaseStep(new LeaseStep.Read((wake + 5_000) * MS),
          List.of()));
    }

    /** A term that lapsed on its own clock left the Lease as this replica last wrote it: a clean close releases it. */
    @Test
    void aTermThatLapsedOnItsOwnClockIsReleasedByACleanClose() {
      leaderAtZero();
      assertThat(protocol.lapsed(at(10_000)).signals())
          .containsExactly(new LeaseStep.Lost(LossCause.TERM_LAPSED, Optional.empty()));

      LeaseStep release = protocol.finishAfterLoss(at(10_000), true);

      assertThat(release.action()).isEqualTo(new LeaseStep.Update(writtenRecord(release), 15_000 * MS));
      assertThat(writtenRecord(release).holder()).isNull();
      assertThat(writtenRecord(release).resourceVersion()).as("a compare-and-set on its last write").isEqualTo("11");
    }

    @Test
    void aStartFailureGivenUpAtTheDeadlineIsNotReleased() {
      leaderAtZero();

      LeaseStep step = protocol.relinquish(at(10_000), true);

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.HandleLoss(),
          List.of(new LeaseStep.Lost(LossCause.START_FAILED, Optional.empty()))));
    }

    @Test
    void aStartFailureReleasedThenLostIsALossToHandle() {
      leaderAtZero();
      LeaseStep release = protocol.relinquish(at(500), true);

      assertThat(protocol.answer(at(600), written(release, "12")).action()).isInstanceOf(LeaseStep.HandleLoss.class);
    }

    @Test
    void afterALossWhileClosingItFinishesWithoutContendingAgain() {
      leaderAtZero();
      protocol.close(at(500));
      protocol.lapsed(at(1_000));

      assertThat(protocol.afterLoss(at(1_000), true)).isEqualTo(new LeaseStep(new LeaseStep.Finished(), List.of()));
    }

    @Test
    void contendingAgainAfterAStartFailureSaysHowLongItBacksOff() {
      leaderAtZero();
      protocol.relinquish(at(500), false);

      LeaseStep step = protocol.afterLoss(at(500), true);

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Await(2_500 * MS), List.of(
          new LeaseStep.Fact(FactKind.BACKING_OFF, "2000"), new LeaseStep.Fact(FactKind.CONTENDING_AGAIN, ""))));
    }
  }

  @Nested
  class Releasing {

    @Test
    void theReleaseIsAnsweredByOneRequestTimeoutAfterItWasSentAndDatedThen() {
      leaderAtZero();
      LeaseStep release = protocol.finish(at(1_000), true);

      protocol.answer(at(1_050), written(release, "12"));

      assertThat(release.action()).isEqualTo(new LeaseStep.Update(writtenRecord(release), 6_000 * MS));
      assertThat(protocol.lastSuccessNanos()).contains(1_000 * MS);
    }

    @Test
    void aReleaseConflictRereadsWithinARequestTimeoutAndCountsAsContact() {
      leaderAtZero();
      protocol.finish(at(1_000), true);

      LeaseStep reread = protocol.answer(at(1_050), failed(FailureKind.CONFLICT));

      assertThat(reread.action()).isEqualTo(new LeaseStep.Read(6_050 * MS));
      assertThat(protocol.lastSuccessNanos()).contains(1_000 * MS);
      protocol.answer(at(1_100), found(new LeaseRecord("me", 15, WALL, WALL, 7, "40")));
      assertThat(protocol.lastSuccessNanos()).contains(1_050 * MS);
    }

    @Test
    void aReleaseRereadAnsweredAtTheDeadlineLeavesABumpedTermToExpire() {
      LeaseStep elected = leaderAtZero();
      LeaseRecord mine = elected(elected).record();
      protocol.finish(at(1_000), true);
      protocol.answer(at(1_050), failed(FailureKind.CONFLICT));
      LeaseRecord bumped = new LeaseRecord("me", 15, mine.acquireTime(), WALL.plusSeconds(5), 7, "40");

      LeaseStep step = protocol.answer(at(10_000), found(bumped));

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Finished(), List.of()));
    }

    @Test
    void aReleaseRereadAnsweredJustBeforeTheDeadlineReleasesABumpedTermOfItsOwn() {
      LeaseStep elected = leaderAtZero();
      LeaseRecord mine = elected(elected).record();
      protocol.finish(at(1_000), true);
      protocol.answer(at(1_050), failed(FailureKind.CONFLICT));
      LeaseRecord bumped = new LeaseRecord("me", 15, mine.acquireTime(), WALL.plusSeconds(5), 7, "40");

      LeaseStep step = protocol.answer(at(9_999), found(bumped));

      assertThat(writtenRecord(step).holder()).as("its term is still valid: whoever bumped it, it is its own")
          .isNull();
      assertThat(writtenRecord(step).resourceVersion()).isEqualTo("40");
    }

    /**
     * The read before a release after the renew deadline is a call answered like any other: it counts as contact
     * with the server, and what it shows is observed (here a new holder with an hour-long lease, which is reported).
     */
    @Test
    void theReadBeforeAReleaseAfterTheDeadlineCountsAsContactAndIsObserved() {
      leaderAtZero();
      protocol.wake(at(2_000));
      assertThat(protocol.answer(at(10_000), failed(FailureKind.OTHER)).action())
          .isInstanceOf(LeaseStep.HandleLoss.class);
      assertThat(protocol.finishAfterLoss(at(10_000), true).action()).isEqualTo(new LeaseStep.Read(15_000 * MS));

      LeaseStep step = protocol.answer(at(10_050), found(held("other", 7_200, 8, "30")));

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Finished(),
          List.of(new LeaseStep.Fact(FactKind.LONG_LEASE_DURATION, "other 7200"))));
      assertThat(protocol.lastSuccessNanos()).contains(10_000 * MS);
    }

    @Test
    void aReleaseRereadAnsweredAtTheDeadlineReleasesWhatThisReplicaWroteAgain() {
      LeaseStep elected = leaderAtZero();
      LeaseRecord mine = elected(elected).record();
      protocol.finish(at(1_000), true);
      protocol.answer(at(1_050), failed(FailureKind.CONFLICT));

      LeaseStep step = protocol.answer(at(10_000), found(mine.withResourceVersion("40")));

      assertThat(writtenRecord(step).holder()).isNull();
      assertThat(writtenRecord(step).resourceVersion()).isEqualTo("40");
    }

    @Test
    void aReleaseRereadAnsweredAtTheDeadlineReleasesARenewalInDoubtThatLanded() {
      leaderAtZero();
      LeaseStep renew = protocol.wake(at(2_000));
      protocol.finishRequested(true);
      LeaseStep release = protocol.answer(at(7_000), failed(FailureKind.OTHER)); // timed out; released at once
      protocol.answer(at(7_050), failed(FailureKind.CONFLICT)); // the renewal had landed

      LeaseStep again = protocol.answer(at(10_000), found(writtenRecord(renew).withResourceVersion("12")));

      assertThat(writtenRecord(release).holder()).isNull();
      assertThat(writtenRecord(again).holder()).isNull();
      assertThat(writtenRecord(again).resourceVersion()).isEqualTo("12");
    }

    @Test
    void aFailedReleaseRereadSaysTheReleaseFailedAndFinishes() {
      leaderAtZero();
      protocol.finish(at(1_000), true);
      protocol.answer(at(1_050), failed(FailureKind.CONFLICT));

      LeaseStep step = protocol.answer(at(1_100), failed(FailureKind.OTHER));

      assertThat(step).isEqualTo(new LeaseStep(new LeaseStep.Finished(),
          List.of(new LeaseStep.Fact(FactKind.RELEASE_FAILED, "OTHER in a test"))));
    }
  }

  /**
   * Which renewals whose answer never came (a timeout, a 5xx: the server may have applied them) still count as
   * possibly this replica's own write, for the release after a loss and for taking its own last term back: only those
   * of the current term since its last write known to have landed, sixteen at most.
   */
  @Nested
  class RenewalsInDoubt {

    /** A renewal sent at {@code sentMillis} whose answer is a timeout at {@code answeredMillis}; its record. */
    LeaseRecord timedOut(LeaseProtocol leader, long sentMillis, long answeredMillis) {
      LeaseStep renew = leader.wake(at(sentMillis));
      assertThat(renew.action()).isInstanceOf(LeaseStep.Update.class);
      leader.answer(at(answeredMillis), failed(FailureKind.OTHER));
      return writtenRecord(renew);
    }

    /** After a loss at the renew deadline {@code lostMillis}, the step that a clean close's read showing it leads to. */
    LeaseStep closedAfterLossAndRead(long lostMillis, LeaseRecord shown) {
      assertThat(protocol.role()).isEqualTo(LeaseProtocol.Role.LOST);
      assertThat(protocol.finishAfterLoss(at(lostMillis), true).action()).isInstanceOf(LeaseStep.Read.class);
      return protocol.answer(at(lostMillis + 50), found(shown));
    }

    @Test
    void aRenewalThatLandedSettlesTheDoubtsBeforeIt() {
      leaderAtZero();
      LeaseRecord doubted = timedOut(protocol, 2_000, 2_100);
      LeaseStep renew = protocol.wake(at(4_000));
      protocol.answer(at(4_100), written(renew, "12")); // conditional on "11" too: the doubted one never landed
      timedOut(protocol, 6_000, 14_000);

      LeaseStep step = closedAfterLossAndRead(14_000, doubted.withResourceVersion("13"));

      assertThat(step.action()).as("someone else wrote that since: not released").isInstanceOf(LeaseStep.Finished.class);
    }

    @Test
    void aReReadThatShowsTheTermStillItsOwnSettlesTheDoubtsBeforeIt() {
      LeaseRecord mine = elected(leaderAtZero()).record();
      LeaseRecord doubted = timedOut(protocol, 2_000, 2_100);
      protocol.wake(at(4_000));
      protocol.answer(at(4_100), failed(FailureKind.CONFLICT));
      LeaseRecord bumped = new LeaseRecord("me", 15, mine.acquireTime(), WALL.plusSeconds(3), 7, "15");
      LeaseStep renewAtOnce = protocol.answer(at(4_200), found(bumped));
      assertThat(renewAtOnce.action()).isInstanceOf(LeaseStep.Update.class);
      protocol.answer(at(10_000), failed(FailureKind.OTHER));

      LeaseStep step = closedAfterLossAndRead(10_000, doubted.withResourceVersion("16"));

      assertThat(step.action()).isInstanceOf(LeaseStep.Finished.class);
    }

    @Test
    void onlyTheLastSixteenRenewalsInDoubtAreKept() {
      for (int kept = 0; kept <= 1; kept++) {
        LeaseProtocol leader = new LeaseProtocol("me", LEASE, DEADLINE, 500 * MS, TIMEOUT, 42);
        leader.start(at(0));
        leader.answer(at(0), written(leader.answer(at(0), found(FREE)), "11"));
        List<LeaseRecord> doubted = new java.util.ArrayList<>();
        for (int i = 1; i <= 16; i++) {
          doubted.add(timedOut(leader, 500L * i, 500L * i + 10));
        }
        doubted.add(timedOut(leader, 8_500, 10_000)); // the seventeenth: the loss at the renew deadline
        assertThat(leader.finishAfterLoss(at(10_000), true).action()).isInstanceOf(LeaseStep.Read.class);

        LeaseStep step = leader.answer(at(10_050), found(doubted.get(kept).withResourceVersion("40")));

        if (kept == 0) {
          assertThat(step.action()).as("the first, evicted").isInstanceOf(LeaseStep.Finished.class);
        } else {
          assertThat(writtenRecord(step).holder()).as("the second, kept").isNull();
        }
      }
    }

    @Test
    void theDoubtsOfALostTermEndWithTheNextTermItWins() {
      leaderAtZero();
      LeaseRecord doubted = timedOut(protocol, 2_000, 10_000);
      assertThat(protocol.afterLoss(at(10_000), true).action()).isInstanceOf(LeaseStep.Read.class);
      LeaseStep take = protocol.answer(at(10_050), found(new LeaseRecord(null, 1, WALL, WALL, 7, "20")));
      protocol.answer(at(10_100), written(take, "21"));
      protocol.lapsed(at(10_200));
      assertThat(protocol.afterLoss(at(10_200), true).action()).isInstanceOf(LeaseStep.Read.class);

      LeaseStep step = protocol.answer(at(10_250), found(doubted.withResourceVersion("30")));

      assertThat(step.action()).as("an old copy of an earlier term: waited out").isInstanceOf(LeaseStep.Await.class);
      assertThat(step.signals()).contains(new LeaseStep.Fact(FactKind.SAME_IDENTITY_WAITING, "me"));
    }

    @Test
    void aTermLeftToExpireAfterAFailedStartKeepsNoDoubtsOfItsRenewals() {
      leaderAtZero();
      LeaseRecord doubted = timedOut(protocol, 2_000, 2_100);
      protocol.relinquish(at(2_200), false);
      assertThat(protocol.afterLoss(at(2_200), true).action()).isEqualTo(new LeaseStep.Await(4_200 * MS));
      assertThat(protocol.wake(at(4_200)).action()).isInstanceOf(LeaseStep.Read.class);

      LeaseStep step = protocol.answer(at(4_250), found(doubted.withResourceVersion("12")));

      assertThat(step.action()).as("a service may still run: waited out").isInstanceOf(LeaseStep.Await.class);
      assertThat(step.signals()).contains(new LeaseStep.Fact(FactKind.SAME_IDENTITY_WAITING, "me"));
    }
  }

  @Nested
  class NegativeClock {

    // System.nanoTime() may read negative: the protocol compares differences only.
    static final long T0 = -100_000_000L;

    @Test
    void aFreeLeaseIsTakenAtOnce() {
      protocol.start(at(T0));

      assertThat(protocol.answer(at(T0), found(FREE)).action()).isInstanceOf(LeaseStep.Update.class);
    }

    @Test
    void aHeldLeaseIsWaitedOutFromItsLastChange() {
      LeaseRecord renewed = new LeaseRecord("other", 15, WALL.minusSeconds(3600), WALL, 3, "12");
      protocol.start(at(T0));
      protocol.answer(at(T0), found(held("other", 15, 3, "10")));
      protocol.wake(at(T0 + 10_000));
      protocol.answer(at(T0 + 10_000), found(renewed));
      protocol.wake(at(T0 + 24_999));
      LeaseStep before = protocol.answer(at(T0 + 24_999), found(renewed));
      protocol.wake(at(T0 + 25_000));
      LeaseStep due = protocol.answer(at(T0 + 25_000), found(renewed));

      assertThat(before.action()).isEqualTo(new LeaseStep.Await((T0 + 25_000) * MS));
      assertThat(due.action()).isInstanceOf(LeaseStep.Update.class);
    }

    @Test
    void aFailedReadAfterALossIsRetriedAtTheNextPoll() {
      protocol.start(at(T0));
      protocol.answer(at(T0), written(protocol.answer(at(T0), found(FREE)), "11"));
      protocol.watchOpened(at(T0 + 100));
      protocol.wake(at(T0 + 2_000));
      protocol.answer(at(T0 + 2_050), failed(FailureKind.CONFLICT));
      protocol.answer(at(T0 + 2_100), found(held("intruder", 15, 8, "20")));
      protocol.afterLoss(at(T0 + 2_100), true);
      long wake = awaitMillis(protocol.answer(at(T0 + 2_100), failed(FailureKind.OTHER)));

      assertThat(protocol.wake(at(wake)).action()).isEqualTo(new LeaseStep.Read((wake + 5_000) * MS));
    }

    @Test
    void theFirstObservationIsDatedEvenBeforeZero() {
      protocol.start(at(T0));
      protocol.answer(at(T0), found(held("other", 15, 3, "10")));
      protocol.wake(at(T0 + 15_000));

      assertThat(protocol.answer(at(T0 + 15_000), found(held("other", 15, 3, "10"))).action())
          .isInstanceOf(LeaseStep.Update.class);
    }

    /**
     * Seed 27182917 of the sharding simulation (SimulationShardingRunnerReadAfterOutage): a runner whose first read
     * failed (the API server down) hears of the Lease from its list and watch, then reads it once the server is back.
     * The sighting dates the content, as a watch event does: the term is taken a lease duration after it arrived, not
     * after the read that showed the same content. Compared with the unset time of a last read (0), such a sighting was
     * dropped on a clock that reads negative, and the take came a read later.
     */
    @Test
    void aSightingBeforeTheFirstReadThatAnsweredDatesTheContent() {
      LeaseRecord renewed = new LeaseRecord("other", 15, WALL.minusSeconds(3600), WALL, 3, "12");
      protocol.seen(held("other", 15, 3, "10"), (T0 - 5_000) * MS);
      protocol.start(at(T0));
      protocol.answer(at(T0 + 20), failed(FailureKind.OTHER));

      assertThat(protocol.watchEvent(at(T0 + 1_000), (T0 + 1_000) * MS, renewed, true).action())
          .as("no read answered yet: it reads").isInstanceOf(LeaseStep.Read.class);
      long t = T0 + 1_500;
      LeaseStep step = protocol.answer(at(t), found(renewed));
      while (step.action() instanceof LeaseStep.Await await) {
        t = Math.floorDiv(await.untilNanos(), MS);
        assertThat(protocol.wake(at(t)).action()).isInstanceOf(LeaseStep.Read.class);
        step = protocol.answer(at(t), found(renewed));
      }

      assertThat(step.action()).isInstanceOf(LeaseStep.Update.class);
      assertThat(t).as("a lease duration after the sighting").isEqualTo(T0 + 16_000);
    }
  }

  /** The protocol's deliberate defects (for the simulation's broken variants) do what their names say. */
  @Nested
  class Flaws {

    LeaseProtocol flawed(LeaseProtocol.Flaw flaw) {
      return new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42, flaw);
    }

    @Test
    void earlyTakeoverTriesOneRetryPeriodBeforeTheHoldersLeaseEnds() {
      LeaseProtocol early = flawed(LeaseProtocol.Flaw.EARLY_TAKEOVER);
      early.start(at(0));
      early.answer(at(0), found(held("other", 15, 3, "10")));
      early.wake(at(12_999));
      LeaseStep before = early.answer(at(12_999), found(held("other", 15, 3, "10")));
      early.wake(at(13_000));

      assertThat(before.action()).isEqualTo(new LeaseStep.Await(13_000 * MS));
      assertThat(early.answer(at(13_000), found(held("other", 15, 3, "10"))).action())
          .isInstanceOf(LeaseStep.Update.class);
    }

    @Test
    void remoteRenewTimeJudgesExpiryByTheHoldersWallClockWhenTheReadHasOne() {
      LeaseProtocol remote = flawed(LeaseProtocol.Flaw.REMOTE_RENEW_TIME);
      remote.start(at(0));
      // Renewed an hour ago by the remote clock: taken at once, though it may be renewing right now.
      assertThat(remote.answer(at(0), found(held("other", 15, 3, "10"))).action())
          .isInstanceOf(LeaseStep.Update.class);

      LeaseProtocol noRenewTime = flawed(LeaseProtocol.Flaw.REMOTE_RENEW_TIME);
      noRenewTime.start(at(0));
      assertThat(noRenewTime.answer(at(0), found(new LeaseRecord("other", 15, WALL, null, 3, "10"))).action())
          .isInstanceOf(LeaseStep.Await.class);
    }

    @Test
    void remoteRenewTimeNeedsTheWallTimeOfARead() {
      LeaseProtocol remote = flawed(LeaseProtocol.Flaw.REMOTE_RENEW_TIME);
      remote.start(at(0));
      remote.answer(at(0), found(new LeaseRecord("other", 15, WALL, WALL, 3, "10")));

      // Seen on the watch (no wall time): judged on the monotonic clock as usual.
      remote.watchEvent(at(1_000), 1_000 * MS, held("other", 15, 4, "12"));
      LeaseStep step = remote.answer(at(1_000), found(held("other", 15, 4, "12")));

      assertThat(awaitMillis(step)).as("polls on, takes nothing").isBetween(3_000L, 3_400L);
    }

    @Test
    void ignoreRenewDeadlineRenewsPastTheDeadlineAndTakesALateRenewal() {
      LeaseProtocol ignoring = flawed(LeaseProtocol.Flaw.IGNORE_RENEW_DEADLINE);
      ignoring.start(at(0));
      ignoring.answer(at(0), written(ignoring.answer(at(0), found(FREE)), "11"));
      ignoring.wake(at(9_000));
      LeaseStep failedLate = ignoring.answer(at(9_100), failed(FailureKind.OTHER));
      LeaseStep renew = ignoring.wake(at(11_000));
      LeaseStep renewed = ignoring.answer(at(12_000), written(renew, "12"));

      assertThat(failedLate.action()).as("next attempt, not the deadline").isEqualTo(new LeaseStep.Await(11_000 * MS));
      assertThat(renew.action()).isEqualTo(new LeaseStep.Update(writtenRecord(renew), 16_000 * MS));
      assertThat(renewed.signals()).doesNotHaveAnyElementsOfTypes(LeaseStep.Lost.class);
    }

    @Test
    void theRealProtocolWakesAtTheDeadlineWhenItComesBeforeTheNextAttempt() {
      leaderAtZero();
      protocol.wake(at(9_000));

      assertThat(protocol.answer(at(9_100), failed(FailureKind.OTHER)).action())
          .isEqualTo(new LeaseStep.Await(10_000 * MS));
    }

    @Test
    void noReleaseAfterDeadlineFinishesWithoutReadingTheLeaseBack() {
      LeaseProtocol closing = flawed(LeaseProtocol.Flaw.NO_RELEASE_AFTER_DEADLINE);
      closing.start(at(0));
      closing.answer(at(0), written(closing.answer(at(0), found(FREE)), "11"));
      closing.wake(at(2_000));
      closing.finishRequested(true);
      assertThat(closing.answer(at(10_000), failed(FailureKind.OTHER)).action()).isInstanceOf(LeaseStep.Finished.class);

      LeaseProtocol lost = flawed(LeaseProtocol.Flaw.NO_RELEASE_AFTER_DEADLINE);
      lost.start(at(0));
      lost.answer(at(0), written(lost.answer(at(0), found(FREE)), "11"));
      lost.wake(at(10_000));
      assertThat(lost.finishAfterLoss(at(10_000), true).action()).isInstanceOf(LeaseStep.Finished.class);

      LeaseProtocol reread = flawed(LeaseProtocol.Flaw.NO_RELEASE_AFTER_DEADLINE);
      reread.start(at(0));
      LeaseRecord mine = writtenRecord(reread.answer(at(0), found(FREE))).withResourceVersion("11");
      reread.answer(at(0), new Answer.Written(mine));
      reread.finish(at(1_000), true);
      reread.answer(at(1_050), failed(FailureKind.CONFLICT));
      assertThat(reread.answer(at(10_000), found(mine.withResourceVersion("40"))).action())
          .isInstanceOf(LeaseStep.Finished.class);
    }

    @Test
    void noWaitAfterFailureReadsAgainAtOnceAfterAFailureAndOnlyThen() {
      LeaseProtocol eager = flawed(LeaseProtocol.Flaw.NO_WAIT_AFTER_FAILURE);
      eager.start(at(0));

      assertThat(eager.answer(at(100), failed(FailureKind.OTHER)).action()).isEqualTo(new LeaseStep.Await(100 * MS));
      assertThat(eager.wake(at(100)).action()).isEqualTo(new LeaseStep.Read(5_100 * MS));
      assertThat(awaitMillis(eager.answer(at(200), found(held("other", 15, 3, "10")))))
          .as("once a read succeeds it polls as the real protocol does").isBetween(2_200L, 2_600L);
    }

    @Test
    void noTransitionIncrementKeepsTheCountNeverBelowZero() {
      LeaseProtocol keeping = flawed(LeaseProtocol.Flaw.NO_TRANSITION_INCREMENT);
      keeping.start(at(0));
      assertThat(writtenRecord(keeping.answer(at(0), found(FREE))).leaseTransitions()).isEqualTo(6);

      LeaseProtocol creating = flawed(LeaseProtocol.Flaw.NO_TRANSITION_INCREMENT);
      creating.start(at(0));
      assertThat(writtenRecord(creating.answer(at(0), new Answer.Missing())).leaseTransitions()).isZero();
    }
  }
}
