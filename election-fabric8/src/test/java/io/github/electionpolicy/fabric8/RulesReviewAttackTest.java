package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.testsupport.LogCapture;
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
}
