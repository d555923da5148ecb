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
class LeadershipEventsAttackTest {

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
        return delegate.dispatch(request);
      }
    };
    try (MockApi api = new MockApi(slowEventsReview);
        Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(() -> !api.writes().isEmpty(), PATIENCE)).as("a contends at all").isTrue();
      assertThat(eventsReviewArrived.get()).as("the events review was asked").isNotZero();
      long firstWrite = api.writes().get(0).receivedNanos();
      assertThat(firstWrite - eventsReviewArrived.get())
          .as("the first Lease write waited for the events review to be given up")
          .isLessThan(REVIEW_TIMEOUT_NANOS / 2);
    }
  }
}
