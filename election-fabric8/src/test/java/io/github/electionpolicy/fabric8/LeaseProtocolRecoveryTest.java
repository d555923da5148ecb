package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Lease protocol recovers from the histories an adversarial review of it found (commit 714029e; findings 3
 * to 6, each with the test that failed then and keeps it fixed now): a take whose answer was lost, a run of
 * failed starts, a restored copy of its own earlier record, an exhausted fencing token. It is driven by hand
 * (times in milliseconds on a made-up monotonic clock; lease 15 s, renew deadline 10 s, retry 2 s, request
 * timeout 5 s). Findings 1 and 2, which need the driver over HTTP, are in {@link LeaseProtocolTest}.
 */
class LeaseProtocolRecoveryTest {

  static final long MS = 1_000_000L;
  static final long LEASE = 15_000 * MS;
  static final long DEADLINE = 10_000 * MS;
  static final long RETRY = 2_000 * MS;
  static final long TIMEOUT = 5_000 * MS;
  static final Instant WALL = Instant.parse("2026-11-30T10:00:00Z");

  static Moment at(long millis) {
    return new Moment(millis * MS, WALL.plusMillis(millis));
  }

  static LeaseRecord writtenRecord(LeaseStep step) {
    return step.action() instanceof LeaseStep.Update update ? update.record()
        : ((LeaseStep.Create) step.action()).record();
  }

  static Answer written(LeaseStep step, String version) {
    return new Answer.Written(writtenRecord(step).withResourceVersion(version));
  }

  static Answer failed(FailureKind kind) {
    return new Answer.Failed(kind, kind + " in a test");
  }



  // ---- FINDING 3 -----------------------------------------------------------------------------------------

  /**
   * Attack: the take (or create) is applied by the server but its answer is lost (request timeout, a dropped
   * connection: typical exactly when a failover happens under load). The protocol only remembers terms it
   * heard confirmed ({@code lastWritten}), so when the next read shows the Lease held under its own identity
   * by the very record it just wrote, it treats it as a foreign same-identity term: SAME_IDENTITY_WAITING, and
   * it waits a full lease duration. Every other follower also waits a lease duration (the record changed).
   * Nobody leads for one more lease duration after the failover: "failover is fast" breaks on one lost
   * answer. (client-go treats a record naming itself as its own and renews at once.)
   *
   * <p>Fix: remember the record of the take in flight ({@code attempted}); a record with this identity that
   * is the same term as {@code attempted} or {@code lastWritten} is this process's own: take it again at once
   * (a new term, conditional on the version just read), which is safe since no other process writes it.
   */
  @Test
  void aTakeWhoseAnswerWasLostIsRecognisedAsItsOwnTermAndNotWaitedOut() {
    LeaseProtocol protocol = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
    protocol.start(at(0));
    LeaseStep take = protocol.answer(at(0), new Answer.Found(new LeaseRecord(null, 1, WALL, WALL, 6, "10")));
    LeaseRecord attempted = writtenRecord(take);
    // The update was applied (version 11) but no answer came within the request timeout.
    LeaseStep afterTimeout = protocol.answer(at(5_000), failed(FailureKind.OTHER));
    assertThat(afterTimeout.action()).isInstanceOf(LeaseStep.Await.class);

    protocol.wake(at(7_000));
    LeaseStep step = protocol.answer(at(7_000), new Answer.Found(attempted.withResourceVersion("11")));

    assertThat(step.signals()).doesNotContain(new LeaseStep.Fact(FactKind.SAME_IDENTITY_WAITING, "me"));
    assertThat(step.action()).isInstanceOf(LeaseStep.Update.class);
  }

  // ---- FINDING 4 -----------------------------------------------------------------------------------------

  /**
   * Attack: the backoff after terms given up because a reconciler could not start is
   * {@code min(leaseDuration, retryPeriod << min(n - 1, 30))}. With retryPeriod >= 8.59 s (2^63 ns / 2^30;
   * e.g. lease 60 s, deadline 40 s, retry 10 s, all valid settings) the shift overflows at the 31st failed
   * term in a row: the wait turns negative, the BACKING_OFF fact says a negative number of milliseconds, and
   * the replica takes the Lease again at once. Since n never goes back under 31 while starts keep failing,
   * from then on it loops take / fail / release without any pause: a request storm against the API server
   * (read + update + release per loop) from a crash-looping controller left running for half an hour.
   *
   * <p>Fix: compute the backoff without overflow, e.g. {@code n - 1 >= Long.numberOfLeadingZeros(retry) - 1
   * ? lease : Math.min(lease, retry << (n - 1))}, or double a saved wait capped at the lease duration.
   */
  @Test
  void theBackoffAfterFailedStartsNeverDropsBelowOneRetryPeriod() {
    long lease = 60_000 * MS;
    long retry = 10_000 * MS;
    LeaseProtocol protocol = new LeaseProtocol("me", lease, 40_000 * MS, retry, 5_000 * MS, 42);
    long now = 0;
    protocol.start(at(now));
    LeaseStep take = protocol.answer(at(now), new Answer.Found(new LeaseRecord(null, 1, WALL, WALL, 0, "v0")));
    List<Long> waits = new ArrayList<>();
    for (int term = 1; term <= 32; term++) {
      protocol.answer(at(now), written(take, "w" + term));
      protocol.relinquish(at(now), false);
      LeaseStep backoff = protocol.afterLoss(at(now), true);
      long until = backoff.action() instanceof LeaseStep.Await await ? await.untilNanos() : now * MS;
      waits.add(until - now * MS);
      now = Math.max(now, until / MS);
      LeaseStep read = backoff.action() instanceof LeaseStep.Read ? backoff : protocol.wake(at(now));
      assertThat(read.action()).isInstanceOf(LeaseStep.Read.class);
      take = protocol.answer(at(now), new Answer.Found(new LeaseRecord(null, 1, WALL, WALL, term, "r" + term)));
    }

    assertThat(waits).allSatisfy(w -> assertThat(w).isGreaterThanOrEqualTo(retry));
  }
  // ---- FINDING 5 -----------------------------------------------------------------------------------------

  /**
   * Attack: a foreign writer restores an old copy of the Lease (a GitOps sync or a backup restore of the
   * namespace, a {@code kubectl replace} of a stale manifest) that names this process with the acquireTime and
   * transitions of its own earlier term, while another replica leads. Every other follower sees a change and
   * waits a lease duration, but this process takes "its own last term" at once, on the strength of
   * acquireTime + transitions alone. The current leader's term is still valid (it only notices at its next
   * renewal, up to a retry period later, and its reconcilers run until then): two leaders.
   *
   * <p>Fix: count a record as this process's own last term only if nothing was written since, i.e. its
   * resourceVersion is the one this process's last write got (or the record is content-equal and no other
   * holder was observed since); otherwise wait it out like any other change.
   */
  @Test
  void aRestoredCopyOfItsOwnEarlierTermIsWaitedOutLikeAnyOtherChange() {
    LeaseProtocol protocol = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
    protocol.start(at(0));
    LeaseStep take = protocol.answer(at(0), new Answer.Found(new LeaseRecord(null, 1, WALL, WALL, 6, "10")));
    LeaseStep elected = protocol.answer(at(0), written(take, "11"));
    LeaseRecord mine = writtenRecord(take).withResourceVersion("11");
    assertThat(elected.signals()).anyMatch(LeaseStep.Elected.class::isInstance);
    // Another replica takes the Lease; this one loses at its next renewal and follows.
    protocol.wake(at(2_000));
    protocol.answer(at(2_050), failed(FailureKind.CONFLICT));
    LeaseRecord other = new LeaseRecord("other", 15, WALL.plusSeconds(1), WALL.plusSeconds(1), 8, "12");
    protocol.answer(at(2_100), new Answer.Found(other));
    protocol.afterLoss(at(2_100), true);
    LeaseStep following = protocol.answer(at(2_200), new Answer.Found(other));
    assertThat(following.action()).isInstanceOf(LeaseStep.Await.class);

    // At 3 s a restore writes back the spec of this process's old term (new resourceVersion 13).
    protocol.wake(at(3_000));
    LeaseStep step = protocol.answer(at(3_000), new Answer.Found(mine.withResourceVersion("13")));

    assertThat(step.action()).isInstanceOf(LeaseStep.Await.class);
  }

  // ---- FINDING 6 -----------------------------------------------------------------------------------------

  /**
   * Attack: leaseTransitions is raised to Integer.MAX_VALUE once (a foreign writer's typo, or the token
   * really ran out) and an operator resets it, as the TOKEN_EXHAUSTED fact asks. Every running replica keeps
   * highestTransitions = MAX_VALUE in memory for good and never takes a term again, however free the Lease is:
   * with all replicas running, nobody leads until every pod is restarted. A single transient bad write is
   * enough to stop the whole controller.
   *
   * <p>Fix: when the Lease shows a count lower than the highest remembered and the record is free or
   * expired, either follow the operator's reset (log it loudly: tokens restart) or make the required action
   * explicit: exit (so the pod restarts) rather than wait forever; at the least say "restart every replica"
   * in the fact, not "reset the token".
   */
  @Test
  void aReplicaThatSawAnExhaustedTokenLeadsAgainAfterTheOperatorResetsIt() {
    LeaseProtocol protocol = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
    protocol.start(at(0));
    LeaseStep exhausted = protocol.answer(at(0),
        new Answer.Found(new LeaseRecord(null, 1, WALL, WALL, Integer.MAX_VALUE, "10")));
    assertThat(exhausted.signals()).contains(new LeaseStep.Fact(FactKind.TOKEN_EXHAUSTED, "2147483647"));

    // The operator resets the token: a free Lease with transitions 0.
    protocol.wake(at(15_000));
    LeaseStep step = protocol.answer(at(15_000),
        new Answer.Found(new LeaseRecord(null, 1, WALL, WALL, 0, "20")));

    assertThat(step.action()).isInstanceOf(LeaseStep.Update.class);
  }

  // ---- A RENEWAL THAT LANDED AFTER THE RENEW DEADLINE ----------------------------------------------------

  /**
   * Finding (seed 161464862175 of {@code SimulationSharding}, {@code SimulationShardingLateRenewal}): the last
   * renewal before the renew deadline is sent with what is left of it (2 ms) as its timeout; the server applies it,
   * its answer comes too late, and the term is lost at the deadline. Contending again, the process read the Lease,
   * found its own identity under a record it had no confirmed write of, and waited it out as another process's
   * (SAME_IDENTITY_WAITING): a whole lease duration more, during which every other replica, which saw the renewal,
   * counted it live. A sharded member's membership Lease: its share stayed unowned that long.
   *
   * <p>Fixed: the renewals still in doubt when a lost term ends ({@link LeaseProtocolState#lostTermDoubts}) count
   * as this process's own last term, exactly as stored (content and term), as a take whose answer never came
   * does: it takes it back at once, a new term conditional on the version read. A restored copy of an older record
   * still does not count (finding 5).
   */
  @Test
  void aRenewalThatLandedAfterTheRenewDeadlineIsTakenBackAtOnce() {
    LeaseProtocol protocol = new LeaseProtocol("me", LEASE, DEADLINE, RETRY, TIMEOUT, 42);
    protocol.start(at(0));
    LeaseStep take = protocol.answer(at(0), new Answer.Found(new LeaseRecord(null, 1, WALL, WALL, 6, "10")));
    protocol.answer(at(0), written(take, "11"));
    // Every renewal from then on times out; the server applies the last one (version 12) after its timeout.
    long now = 0;
    LeaseStep step = protocol.wake(at(RETRY / MS));
    now = RETRY / MS;
    LeaseRecord lastRenewal = null;
    for (int i = 0; i < 100 && !(step.action() instanceof LeaseStep.HandleLoss); i++) {
      if (step.action() instanceof LeaseStep.Update update) {
        lastRenewal = update.record();
        now = Math.max(now, update.answerByNanos() / MS);
        step = protocol.answer(at(now), failed(FailureKind.OTHER));
      } else {
        now = Math.max(now, ((LeaseStep.Await) step.action()).untilNanos() / MS);
        step = protocol.wake(at(now));
      }
    }
    assertThat(step.action()).isInstanceOf(LeaseStep.HandleLoss.class);
    assertThat(lastRenewal).isNotNull();

    LeaseStep read = protocol.afterLoss(at(now), true);
    assertThat(read.action()).isInstanceOf(LeaseStep.Read.class);
    LeaseStep retake = protocol.answer(at(now + 5), new Answer.Found(lastRenewal.withResourceVersion("12")));

    assertThat(retake.signals()).doesNotContain(new LeaseStep.Fact(FactKind.SAME_IDENTITY_WAITING, "me"));
    assertThat(retake.action()).isInstanceOf(LeaseStep.Update.class);
    assertThat(writtenRecord(retake).transitions()).as("a new term").isEqualTo(8);
  }
}
