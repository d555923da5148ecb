package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Adversarial review of the Lease protocol: one test per finding, each named after the behaviour that should
 * hold. Every test here failed against the code it was written for (commit 714029e); each finding is fixed and
 * its test keeps it fixed.
 * Pure tests drive {@link LeaseProtocol} by hand (times in milliseconds on a made-up monotonic clock; lease
 * 15 s, renew deadline 10 s, retry 2 s, request timeout 5 s); driver tests run over HTTP against
 * {@link MockApi}.
 */
class LeaseProtocolAttackTest {

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

  // ---- FINDING 1 -----------------------------------------------------------------------------------------

  /**
   * Attack: LeaseElector.run() calls {@code protocol.answer(now(), read(...))} (and the same for writes).
   * Java evaluates arguments left to right, so the Moment handed to the protocol as "when the answer came" is
   * taken BEFORE the request is even sent. The protocol dates every observation by that moment, so a slow read
   * whose answer shows a renewal the holder made while the read was in flight is dated up to one request
   * timeout too early, and the follower takes over that much before the holder's lease duration has passed
   * since the change. Here the read spends 600 ms in flight (a fake ticker jumps; lease 2 s, deadline 1.5 s,
   * request timeout 750 ms) and the holder renews just before the server answers it: the follower takes over
   * 1.4 s after that renewal, while a holder that sent it is valid for 1.5 s. Two leaders for ~100 ms; with
   * realistic settings (lease 15 s, deadline 12 s, timeout 6 s) up to 3 s.
   *
   * <p>Fix: take the moment after the call returns: {@code Answer a = read(...); step = protocol.answer(now(),
   * a);} (and the same for create and update).
   */
  @Test
  void followerWaitsTheLeaseDurationSinceAChangeSeenInASlowReadAnswer() throws Exception {
    AtomicLong offset = new AtomicLong();
    Ticker ticker = () -> System.nanoTime() + offset.get();
    AtomicBoolean armed = new AtomicBoolean(true);
    AtomicLong changedAt = new AtomicLong();
    AtomicLong takenAt = new AtomicLong();
    String leasePath = "/apis/coordination.k8s.io/v1/namespaces/" + MockApi.NAMESPACE + "/leases/" + MockApi.LEASE;
    ServiceLog log = new ServiceLog();
    try (MockApi api = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if ("GET".equals(request.getMethod()) && path.equals(leasePath) && armed.getAndSet(false)) {
          // The follower's first read spends 600 ms on its way to the server; meanwhile the holder renews.
          offset.addAndGet(Duration.ofMillis(600).toNanos());
          MockResponse current = delegate.dispatch(new RecordedRequest("HTTP/1.1", HttpMethod.GET, leasePath,
              Headers.builder().build(), new Buffer()));
          Lease lease = Serialization.unmarshal(
              new String(current.getBody().getBytes(), StandardCharsets.UTF_8), Lease.class);
          lease.getSpec().setRenewTime(ZonedDateTime.now());
          delegate.dispatch(new RecordedRequest("HTTP/1.1", HttpMethod.PUT, leasePath,
              Headers.builder().add("Content-Type", "application/json").build(),
              new Buffer(Serialization.asJson(lease).getBytes(StandardCharsets.UTF_8))));
          changedAt.set(ticker.read());
        } else if ("PUT".equals(request.getMethod()) && path.equals(leasePath)
            && new String(request.getBody().getBytes(), StandardCharsets.UTF_8).contains("\"holderIdentity\":\"a\"")) {
          takenAt.compareAndSet(0, ticker.read());
        }
        return delegate.dispatch(request);
      }
    })) {
      KubernetesClient client = api.client();
      client.leases().inNamespace(MockApi.NAMESPACE).resource(new LeaseBuilder()
          .withNewMetadata().withName(MockApi.LEASE).withNamespace(MockApi.NAMESPACE).endMetadata()
          .withNewSpec().withHolderIdentity("ghost").withLeaseDurationSeconds(2)
          .withAcquireTime(ZonedDateTime.now()).withRenewTime(ZonedDateTime.now()).withLeaseTransitions(4)
          .endSpec().build()).create();

      try (ElectionRunner a = ElectionRunner.builder()
          .client(client)
          .decision(MockApi.CONTEND)
          .settings(MockApi.fastSettings("a").build())
          .service(log.service("a"))
          .ticker(ticker)
          .rbacPreflight(false)
          .start()) {
        assertThat(Replica.awaitTrue(() -> takenAt.get() != 0, Duration.ofSeconds(6))).isTrue();

        assertThat(changedAt.get()).isNotZero();
        // The holder renewed at changedAt; it stays leader until (at least) changedAt + renew deadline.
        assertThat(Duration.ofNanos(takenAt.get() - changedAt.get()))
            .isGreaterThanOrEqualTo(MockApi.LEASE_DURATION);
      }
    }
  }

  // ---- FINDING 2 -----------------------------------------------------------------------------------------

  /**
   * Attack: ElectionRunner hands ServiceControl {@code () -> elector.relinquish(true)} as the failure
   * callback, and LeaseElector.relinquish just sets a flag: neither says WHICH term failed. A reconciler whose
   * start() is slow and then fails (say, an informer sync that times out because the API server is flaky)
   * fails while the elector is inside events.lost() for that very term (the RECONTEND stop is queued behind the
   * failing start on the control thread, so the callback always lands there). The flag outlives the term: the
   * elector contends again, takes the free Lease at once (no Await in between, so the flag is not consumed
   * while following), and hands the stale relinquish to the NEW term at its first Await. The new term, whose
   * reconcilers are starting or running fine, is released (holder emptied) before they are stopped (the stop
   * only comes in HandleLoss after the release was answered), so a follower may take over and start while
   * they still run: two leaders; the release-only-after-a-clean-stop rule is broken. Then the replica backs off
   * for a failure that never happened to this term.
   *
   * <p>Fix: tie relinquish to its term: {@code control.startLater(term, () -> elector.relinquish(term, true))},
   * and in LeaseElector ignore (clear) a relinquish whose term is not the current one; clear any pending
   * relinquish when a term ends.
   */
  @Test
  void aFailedStartOfALostTermNeverGivesUpTheNextTerm() throws Exception {
    ServiceLog log = new ServiceLog();
    CountDownLatch firstStartEntered = new CountDownLatch(1);
    CountDownLatch failFirstStart = new CountDownLatch(1);
    AtomicInteger starts = new AtomicInteger();
    LeaderService recorded = log.service("a");
    LeaderService reconciler = new LeaderService() {
      @Override
      public void start(LeadershipTerm term) throws Exception {
        if (starts.incrementAndGet() == 1) {
          firstStartEntered.countDown();
          failFirstStart.await(10, TimeUnit.SECONDS);
          throw new IllegalStateException("informers did not sync");
        }
        recorded.start(term);
      }

      @Override
      public void stop() throws Exception {
        recorded.stop();
      }
    };
    try (MockApi api = new MockApi()) {
      KubernetesClient client = api.client();
      try (ElectionRunner a = ElectionRunner.builder()
          .client(client)
          .decision(MockApi.CONTEND)
          .settings(MockApi.fastSettings("a").build())
          .service(reconciler)
          .rbacPreflight(false)
          .start()) {
        assertThat(firstStartEntered.await(5, TimeUnit.SECONDS)).isTrue();

        // Term 1 is lost: another holder takes the Lease while the first start hangs.
        Lease current = client.leases().inNamespace(MockApi.NAMESPACE).withName(MockApi.LEASE).get();
        client.leases().inNamespace(MockApi.NAMESPACE).resource(new LeaseBuilder(current).editSpec()
            .withHolderIdentity("intruder").withLeaseTransitions(current.getSpec().getLeaseTransitions() + 1)
            .withAcquireTime(ZonedDateTime.now()).withRenewTime(ZonedDateTime.now()).endSpec().build()).update();
        assertThat(Replica.awaitTrue(
            () -> a.state().equals(new ElectionState.Following(Optional.of("intruder"))), Duration.ofSeconds(3)))
            .isTrue();
        // The intruder releases; then the first start fails (while the elector handles term 1's loss).
        current = client.leases().inNamespace(MockApi.NAMESPACE).withName(MockApi.LEASE).get();
        client.leases().inNamespace(MockApi.NAMESPACE).resource(new LeaseBuilder(current).editSpec()
            .withHolderIdentity("").withLeaseDurationSeconds(1).endSpec().build()).update();
        failFirstStart.countDown();

        Optional<ServiceLog.Entry> term2 = log.await("a", ServiceLog.Kind.START, 0, Duration.ofSeconds(3));
        assertThat(term2).isPresent();
        Thread.sleep(1_000);

        // Nothing went wrong with term 2: it must still run, never stopped, still holding the Lease.
        assertThat(log.of("a", ServiceLog.Kind.STOP)).isEmpty();
        assertThat(a.currentTerm()).hasValueSatisfying(
            t -> assertThat(t.leaseTransitions()).isEqualTo(term2.get().term().leaseTransitions()));
      }
    }
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
}
