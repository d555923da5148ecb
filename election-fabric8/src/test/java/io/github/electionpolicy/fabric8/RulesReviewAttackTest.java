package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.github.electionpolicy.testsupport.LogCapture;
import java.util.concurrent.atomic.AtomicInteger;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * The RBAC preflight's SelfSubjectRulesReview of commit 32fd692 against a server that is slow to answer it (from
 * the adversarial review, h-attack4). Real fabric8 client, embedded Lease API.
 */
class RulesReviewAttackTest {

  private final ServiceLog log = new ServiceLog();

  /** Every review the server received, in order; the rules review answered after {@code rulesDelay}. */
  private static MockApi slowRules(List<String> reviews, Duration rulesDelay) {
    return new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.endsWith("reviews")) {
          reviews.add(path.substring(path.lastIndexOf('/') + 1));
        }
        MockResponse response = delegate.dispatch(request);
        if (MockApi.isRulesReview(request)) {
          response.setBodyDelay(rulesDelay.toMillis(), TimeUnit.MILLISECONDS);
        }
        return response;
      }
    });
  }

  /**
   * FINDING 2 (h-attack4). The rules review is asked alone first and waited for up to the review client's request
   * timeout (10 s) before the access reviews are even sent, so a server (or a proxy in front of it) that is slow to
   * answer SelfSubjectRulesReview, while it answers the access reviews and the Lease at once, holds the first
   * election's take for 10 s: before 32fd692 the same replica led in milliseconds. Against a server that answers
   * nothing the preflight's worst case doubled too (the rules review's 10 s, then the access reviews' 10 s). The
   * rules review is an optimisation of a path that answers in one round trip; it should not be able to cost more
   * than about that (hedge: send the access reviews once the rules review has not answered within a round trip or
   * a short bound; or give it a short timeout of its own). The bound is a design choice, so this is not fixed here.
   */
  @Test
  @Disabled("finding 2: a slow SelfSubjectRulesReview holds the first election's take for the review timeout (10 s)")
  void aSlowRulesReviewDoesNotHoldTheFirstElectionBehindIt() throws Exception {
    List<String> reviews = new CopyOnWriteArrayList<>();
    try (MockApi api = slowRules(reviews, Duration.ofSeconds(30));
        Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5)))
          .as("leads while its rules review is still unanswered (reviews so far: %s)", reviews).isTrue();
    }
  }

  /**
   * Sound: a close while the rules review is in flight sends nothing after (no access review, no events or watch
   * review) and reports nothing, whatever the late answer says. The wait after the close is the only way to see
   * that nothing more comes: it lasts until past the rules review's delayed answer.
   */
  @Test
  void aCloseWhileTheRulesReviewIsInFlightSendsNothingAfterAndReportsNothing() throws Exception {
    List<String> reviews = new CopyOnWriteArrayList<>();
    Duration delay = Duration.ofSeconds(2);
    try (LogCapture logs = new LogCapture();
        MockApi api = slowRules(reviews, delay)) {
      Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log);
      assertThat(Replica.awaitTrue(() -> reviews.contains("selfsubjectrulesreviews"), Duration.ofSeconds(10)))
          .isTrue();
      a.close();
      assertThat(a.runner.awaitStopped(Duration.ofSeconds(5))).isTrue();
      int atClose = reviews.size();
      // Past the delayed answer (and the review client's time to read it), nothing more is asked.
      assertThat(Replica.awaitTrue(() -> reviews.size() > atClose, delay.plusSeconds(2)))
          .as("reviews after the close: %s", reviews).isFalse();
      assertThat(reviews).containsExactly("selfsubjectrulesreviews");
      assertThat(logs.text()).doesNotContain("may not").doesNotContain("RBAC");
      assertThat(a.runner.startupFailure()).isEmpty();
    }
  }

  /**
   * FINDING 3 (h-attack4). When the listed rules allow the Lease but do not show create on events, the events
   * review was only sent once the verdict was given, that is together with the take: before 32fd692 it was sent
   * at the start, beside the access reviews, a round trip ahead of the verdict. So the first Event write (its 403)
   * raced the review and usually won under load: the server refused an Event the preflight was there to foresee,
   * and the warning named the refused write instead of the preflight (LeadershipEventsTest's
   * aDeniedCreateOnEventsFoundByThePreflightIsOneWarningAndTheElectionGoesOn failed so in the review's run). Here
   * the server's delays make the order certain: the rules review answers after 600 ms, the events review after
   * 300 ms, so a review sent at the start answers before the verdict. Not fixed here: the fix that restores the old
   * order (send the events review beside the rules review, cancel it when the rules show create on events allowed;
   * it makes this test pass) costs the request 32fd692 saved in the usual case (the documented Role allows events),
   * and the other (hold the verdict for the events review when the rules do not show it) waits on advice; the
   * lead's choice. The harm is one refused Event write and which sentence the one WARN says.
   */
  @Test
  @Disabled("finding 3: in the fast path the events review is sent with the take and loses the race to the first Event write")
  void theEventsReviewIsSentBesideTheRulesReviewSoItAnswersBeforeTheFirstEventWrite() throws Exception {
    AtomicInteger eventPosts = new AtomicInteger();
    try (LogCapture logs = new LogCapture();
        MockApi api = new MockApi(delegate -> new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            String path = request.getPath() == null ? "" : request.getPath();
            if ("POST".equals(request.getMethod())
                && path.equals("/api/v1/namespaces/" + MockApi.NAMESPACE + "/events")) {
              eventPosts.incrementAndGet();
              return new MockResponse().setResponseCode(403).setHeader("Content-Type", "application/json")
                  .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                      + "\"reason\":\"Forbidden\",\"code\":403}");
            }
            if (MockApi.isRulesReview(request)) {
              return MockApi.leaseRulesOnly(request).setBodyDelay(600, TimeUnit.MILLISECONDS);
            }
            if ("POST".equals(request.getMethod())
                && path.equals("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")) {
              SelfSubjectAccessReview review = Serialization.unmarshal(
                  new String(request.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8),
                  SelfSubjectAccessReview.class);
              if ("events".equals(review.getSpec().getResourceAttributes().getResource())) {
                review.setStatus(new SubjectAccessReviewStatus(false, false, "no create on events", null));
                return new MockResponse().setResponseCode(201).setHeader("Content-Type", "application/json")
                    .setBody(Serialization.asJson(review)).setBodyDelay(300, TimeUnit.MILLISECONDS);
              }
            }
            return delegate.dispatch(request);
          }
        });
        Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(10))).isTrue();
      assertThat(Replica.awaitTrue(() -> logs.text().contains("may not create events"), Duration.ofSeconds(10)))
          .isTrue();
      assertThat(logs.text()).contains("the RBAC preflight found create on events denied")
          .doesNotContain("the server refused to create the Event");
    }
  }
}
