package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** Attacks on the leadership Events: what they must never do to the election. */
class LeadershipEventsNeverHoldTheElectionTest {

  private static final String ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
  /** The preflight's own bound on one review (Fabric8LeaseTransport.REVIEW_TIMEOUT_MILLIS). */
  private static final long REVIEW_TIMEOUT_NANOS = Duration.ofSeconds(10).toNanos();
  private static final Duration PATIENCE = Duration.ofSeconds(30);

  private final ServiceLog log = new ServiceLog();

  /**
   * FINDING 1: the RBAC preflight waits for its {@code create events} review before the runner may contend. The
   * events review is advice only ("a denial is a warning, never a reason not to contend"), yet
   * {@code RbacPreflight.check} blocks on its answer ({@code eventsDenied}: {@code review.get()}) once the Lease
   * reviews are granted, so an events review that the server answers slowly delays the runner's first Lease
   * write by up to the review timeout (10 s), although every review the election needs has answered. Events
   * must never delay the election. The server here answers every review at once except the one about events;
   * with the bug the first Lease write comes only once the client gave that review up (about 10 s after it was
   * sent, a bound of the client that cannot come early); without it, right after the Lease reviews.
   */
  @Test
  void aSlowEventsReviewDoesNotDelayTheFirstLeaseWrite() throws Exception {
    AtomicLong eventsReviewArrived = new AtomicLong();
    UnaryOperator<Dispatcher> slowEventsReview = delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if ("POST".equals(request.getMethod()) && ACCESS_REVIEWS.equals(path)
            && new String(request.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8)
                .contains("\"events\"")) {
          eventsReviewArrived.compareAndSet(0, System.nanoTime());
          MockResponse answer = delegate.dispatch(request);
          return answer.setBodyDelay(Duration.ofSeconds(60));
        }
        if (MockApi.isRulesReview(request)) {
          return MockApi.rulesReviewRefused(); // the access reviews decide: the events review is asked
        }
        return delegate.dispatch(request);
      }
    };
    try (MockApi api = new MockApi(slowEventsReview);
        Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(() -> !api.writes().isEmpty(), PATIENCE)).as("a contends at all").isTrue();
      // Sent once the rules review granted the Lease, beside the first write: it may come just after it.
      assertThat(Replica.awaitTrue(() -> eventsReviewArrived.get() != 0, PATIENCE))
          .as("the events review was asked").isTrue();
      long firstWrite = api.writes().get(0).receivedNanos();
      assertThat(firstWrite - eventsReviewArrived.get())
          .as("the first Lease write waited for the events review to be given up")
          .isLessThan(REVIEW_TIMEOUT_NANOS / 2);
    }
  }

  /**
   * FINDING 2: Event writes take the slots of the Lease calls. Both go through {@code SharedPools.io()}, whose
   * {@value SharedPools#IO_MAX_CALLS} calls in flight at once are the JVM's bound for Lease calls: "a call
   * refused past that bound fails at once, as a failed call". A runner keeps one Event write in flight while
   * the events endpoint hangs (each for the request timeout), so with enough runners in a JVM (one per Lease,
   * e.g. an operator electing per shard) best-effort writes that hang use up the bound, and the renewals of
   * healthy runners are refused: the Events then block the election. Here 64 transports (as 64 runners do)
   * each have their Event hang at the server; a Lease read sent after is refused instead of answered.
   */
  @Test
  void hangingEventWritesLeaveTheLeaseCallsTheirSlots() throws Exception {
    String eventsPath = "/api/v1/namespaces/" + MockApi.NAMESPACE + "/events";
    java.util.concurrent.atomic.AtomicInteger eventPosts = new java.util.concurrent.atomic.AtomicInteger();
    UnaryOperator<Dispatcher> hanging = delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if ("POST".equals(request.getMethod()) && path.startsWith(eventsPath)) {
          eventPosts.incrementAndGet();
          return new MockResponse().setResponseCode(201).setBody("{}").setBodyDelay(Duration.ofSeconds(60));
        }
        return delegate.dispatch(request);
      }
    };
    // A request timeout long enough that the writes still hang when the read is sent.
    LeaseSettings settings = MockApi.fastSettings("a").leaseDuration(Duration.ofSeconds(30))
        .renewDeadline(Duration.ofSeconds(20)).retryPeriod(Duration.ofSeconds(2)).build();
    java.util.List<Fabric8LeaseTransport> transports = new java.util.ArrayList<>();
    java.util.concurrent.CountDownLatch written = new java.util.concurrent.CountDownLatch(SharedPools.IO_MAX_CALLS);
    try (MockApi api = new MockApi(hanging)) {
      try {
        for (int i = 0; i < SharedPools.IO_MAX_CALLS; i++) {
          Fabric8LeaseTransport transport = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE, settings,
              SharedPools.io());
          transports.add(transport);
          transport.recordEvent(new LeadershipEvent(MockApi.LEASE + "." + Long.toHexString(1_000 + i),
              LeadershipEvent.Kind.BECAME_LEADER, "r" + i, 0, "r" + i + " became leader (fencing token 0)",
              java.time.Instant.now()), written::countDown);
        }
        // Each runner's one Event write is at the server, unanswered (or given up at the client already).
        assertThat(Replica.awaitTrue(() -> eventPosts.get() + (SharedPools.IO_MAX_CALLS - written.getCount())
            >= SharedPools.IO_MAX_CALLS, PATIENCE)).isTrue();
        java.util.concurrent.CompletableFuture<LeaseStep.Answer> answer = new java.util.concurrent.CompletableFuture<>();
        try (Fabric8LeaseTransport healthy = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE, settings,
            SharedPools.io())) {
          healthy.read((result, failure) -> answer.complete(result));
          LeaseStep.Answer result = answer.get(30, java.util.concurrent.TimeUnit.SECONDS);
          assertThat(result).as("a healthy runner's Lease call is not refused for Event writes")
              .isNotInstanceOf(LeaseStep.Answer.Failed.class);
        }
      } finally {
        transports.forEach(Fabric8LeaseTransport::close);
        // The JVM's Event writes are shared: the next test finds none of these still in flight.
        assertThat(written.await(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      }
    }
  }

  /**
   * FINDING 3: a close whose last renewal fails past the renew deadline ends the term with a bare {@code <identity>
   * stopped leading (fencing token <n>)}. docs/events.md promises that a term ended by a close says how (": released
   * the Lease", ": left the Lease to expire" or ": the release failed, so the Lease expires"), and that a term that
   * ended otherwise is a loss with its cause. Here the runner closes while its renewal is in flight (an API server
   * that answers the Lease's update with 500s), the renewal fails after the renew deadline, and the protocol
   * finishes without a release ({@code LeaseProtocolRenewing.lead}: {@code finish == RELEASE} past the deadline returns
   * {@code Finished} with no fact), so the Event tells neither that the Lease was left to expire nor why. (Since then
   * the protocol reads the Lease back there before it finishes; here that read fails too.)
   */
  @Test
  void aCloseWhoseRenewalFailsPastTheDeadlineSaysHowTheTermEnded() {
    long ms = 1_000_000L;
    long deadline = 10_000 * ms;
    java.time.Instant wall = java.time.Instant.parse("2026-12-01T10:00:00Z");
    LeaseProtocol protocol = new LeaseProtocol("pod-a", 15_000 * ms, deadline, 2_000 * ms, 5_000 * ms, 42);
    LeadershipEvents events = new LeadershipEvents(MockApi.LEASE, "pod-a",
        LeaseSettings.builder().leaseName(MockApi.LEASE).build(), new NoTransport());
    java.util.List<String> messages = new java.util.ArrayList<>();
    java.util.function.LongFunction<LeaseStep.Moment> at = millis -> new LeaseStep.Moment(millis * ms,
        wall.plusMillis(millis));
    java.util.function.Consumer<LeaseStep> feed = step -> events.due(step, wall).forEach(e -> messages.add(
        e.message()));

    LeaseStep step = protocol.start(at.apply(0));
    feed.accept(step);
    step = protocol.answer(at.apply(0), new LeaseStep.Answer.Missing());
    feed.accept(step);
    LeaseRecord taken = ((LeaseStep.Create) step.action()).record();
    step = protocol.answer(at.apply(0), new LeaseStep.Answer.Written(taken.withResourceVersion("1")));
    feed.accept(step);
    assertThat(messages).containsExactly("pod-a became leader (fencing token " + taken.transitions() + ")");
    // Renewals go out and fail until the close comes while one is in flight.
    long t = 0;
    while (!(step.action() instanceof LeaseStep.Update)) {
      t = step.action() instanceof LeaseStep.Await await ? Math.max(t, await.untilNanos() / ms) : t;
      step = protocol.wake(at.apply(t));
      feed.accept(step);
    }
    protocol.finishRequested(true);
    step = protocol.answer(at.apply(deadline / ms + 1),
        new LeaseStep.Answer.Failed(LeaseStep.FailureKind.OTHER, "HTTP 500"));
    feed.accept(step);
    // Past the deadline the close reads the Lease back first (the renewal may have been written); the API server
    // answers that read with a 500 too.
    assertThat(step.action()).isInstanceOf(LeaseStep.Read.class);
    assertThat(messages).hasSize(1);
    step = protocol.answer(at.apply(deadline / ms + 2),
        new LeaseStep.Answer.Failed(LeaseStep.FailureKind.OTHER, "HTTP 500"));
    feed.accept(step);

    assertThat(step.action()).isInstanceOf(LeaseStep.Finished.class);
    assertThat(messages).hasSize(2);
    assertThat(messages.get(messages.size() - 1)).as("the close says how the term ended").matches(
        ".*stopped leading \\(fencing token \\d+\\): (released the Lease|left the Lease to expire"
            + "|the release failed, so the Lease expires)");
  }

  /**
   * FINDING 5 (h-attack2). A runner's next Event is handed to the pool by the write before it, from its worker,
   * while that write still holds its slot of the {@value SharedPools#EVENTS_MAX_CALLS} Event writes: a runner
   * takes two slots at each hand-over. With the other slots in use (other runners' writes, an events endpoint
   * that is slow), the next Event is refused although the write before it is over, and so is every Event queued
   * behind it (each refusal hands the next over at once). Here the other 15 slots are held; the runner's first
   * Event is written, and the second, queued behind it, must be written after it.
   */
  @Test
  void theEventQueuedBehindAWriteTakesTheSlotThatWriteLeaves() throws Exception {
    String eventsPath = "/api/v1/namespaces/" + MockApi.NAMESPACE + "/events";
    java.util.concurrent.atomic.AtomicInteger eventPosts = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.CountDownLatch bothDue = new java.util.concurrent.CountDownLatch(1);
    UnaryOperator<Dispatcher> holdingTheFirst = delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if ("POST".equals(request.getMethod()) && path.startsWith(eventsPath)) {
          if (eventPosts.incrementAndGet() == 1) {
            try {
              bothDue.await(); // the second Event waits behind this one, not sent on its own
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return new MockResponse().setResponseCode(201).setBody("{}");
        }
        return delegate.dispatch(request);
      }
    };
    java.util.concurrent.CountDownLatch othersHeld = new java.util.concurrent.CountDownLatch(
        SharedPools.EVENTS_MAX_CALLS - 1);
    try (MockApi api = new MockApi(holdingTheFirst)) {
      try {
        // The bound is the JVM's: Event writes of earlier tests (a runner's last Events, written after its close)
        // are over first, so that exactly the 15 held here are in flight.
        assertThat(Replica.awaitTrue(() -> SharedPools.eventWrites().inFlight() == 0, Duration.ofSeconds(60)))
            .isTrue();
        for (int i = 0; i < SharedPools.EVENTS_MAX_CALLS - 1; i++) {
          // Places held as 15 Event writes still in flight would hold them (asynchronous: no thread waits).
          assertThat(SharedPools.eventWrites().tryAcquire()).isTrue();
          othersHeld.countDown();
        }
        assertThat(othersHeld.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        try (Fabric8LeaseTransport transport = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
            MockApi.fastSettings("a").build(), SharedPools.io())) {
          LeadershipEvents events = new LeadershipEvents(MockApi.LEASE, "pod-a",
              LeaseSettings.builder().leaseName(MockApi.LEASE).build(), transport);
          java.time.Instant wall = java.time.Instant.now();
          events.due(new LeaseStep(new LeaseStep.Await(0), java.util.List.of(new LeaseStep.Elected(
              new LeaseRecord("pod-a", 15, wall, wall, 3, "7"), 0, java.util.Optional.empty()))), wall);
          // The loss and the end of the term, due in one step: the first goes, the second waits behind it.
          events.step(new LeaseStep(new LeaseStep.HandleLoss(), java.util.List.of(new LeaseStep.Lost(
              LeaseStep.LossCause.DELETED, java.util.Optional.empty()))), wall);
          bothDue.countDown();

          assertThat(Replica.awaitTrue(() -> eventPosts.get() == 2, PATIENCE))
              .as("the second Event is written once the first is, not refused for the slot the first still held")
              .isTrue();
        }
      } finally {
        bothDue.countDown();
        for (long i = othersHeld.getCount(); i < SharedPools.EVENTS_MAX_CALLS - 1; i++) {
          SharedPools.eventWrites().release();
        }
      }
    }
  }

  /** No Event is written: the table is the point. */
  private static final class NoTransport extends ForwardingTransport {
    NoTransport() {
      super(null);
    }

    @Override
    public void recordEvent(LeadershipEvent event, Runnable done) {
      done.run();
    }
  }
}
