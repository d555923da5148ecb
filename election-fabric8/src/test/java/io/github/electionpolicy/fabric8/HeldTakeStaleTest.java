package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Finding 2 (h-attack8): the elector's first read goes out beside the RBAC preflight (fe085da: before it), and a
 * take it decides waits in {@code LeaseElector.heldWrite} for the verdict. {@code allowWrites()} then sends that
 * take as it was decided: its record (renewTime) and the term the protocol counts ("from the decision, which is
 * earlier than the send: a term that looks shorter, never longer") date from the read. When the verdict comes
 * later than the renew deadline after the read (the preflight may take up to its 15 s deadline when the reviews
 * get no answer, longer than the default 10 s renew deadline), the take is written with a Lease already expired,
 * the runner reports Acquired and, at once, Lost ("not renewed within the renew deadline"): its listeners hear
 * Leading and loss for a term that was never valid, its services may be started and stopped, and under
 * {@code LossPolicy.exit()} the process exits on its first election. Seen in h-attack8's first run of
 * a test whose appender delayed the verdict 15 s (Acquired and Lost in the same millisecond). Red here with
 * states [Leading, Following, Leading, Stopped]: the take held since the first read was sent after the verdict,
 * the term it began was over at once, and the runner led again only after contending again.
 *
 * <p>Scenario: the server grants the rules review and the access reviews, each answered twice the renew deadline
 * late (a slow authorizer); the Lease is free.
 *
 * <p>Suggested fix: in {@code LeaseElector.allowWrites()}, a held take older than a fraction of the renew
 * deadline (or simply any held take) is dropped and the attempt starts over with a fresh read (the protocol's
 * start from {@code now()}); or the take is re-decided from the last read at the time of the send.
 *
 * <p>Fixed: {@code LeaseElector.allowWrites()} drops a take held longer than a retry period and reads again at
 * once, as after a conflict (the protocol's own path), so the take is decided, written and counted from then.
 */
class HeldTakeStaleTest {

  private static final Duration REVIEW_DELAY = MockApi.RENEW_DEADLINE.multipliedBy(2);

  @RegisterExtension
  final MockApi api = new MockApi(delegate -> new Dispatcher() {
    @Override
    public MockResponse dispatch(RecordedRequest request) {
      String path = request.getPath() == null ? "" : request.getPath();
      if (path.contains("selfsubjectrulesreviews") || path.contains("selfsubjectaccessreviews")) {
        // Granted, but later than the renew deadline after the elector's first read.
        return delegate.dispatch(request).setBodyDelay(REVIEW_DELAY);
      }
      return delegate.dispatch(request);
    }
  });

  @Test
  void aTakeHeldForALateVerdictLeadsForMoreThanAnInstant() throws Exception {
    List<String> states = new CopyOnWriteArrayList<>();
    ElectionRunner runner = null;
    try {
      runner = ElectionRunner.builder()
          .client(api.client())
          .decision(MockApi.CONTEND)
          .settings(MockApi.fastSettings("a").build())
          .service(LeaderService.of(term -> { }, () -> { }))
          .listener(new ElectionListener() {
            @Override
            public void stateChanged(ElectionState previous, ElectionState current) {
              states.add(current.getClass().getSimpleName());
            }
          })
          .start();
      // The first term, and two renewals of a term (the first's, or after a loss, the next one's).
      assertThat(Await.holds(() -> states.contains("Leading"), Duration.ofSeconds(60))).as("leads").isTrue();
      assertThat(api.awaitWrites("a", 2)).as("renews").isTrue();
    } finally {
      if (runner != null) {
        runner.close();
      }
    }
    assertThat(states.stream().filter("Leading"::equals).count())
        .as("one term, not lost before the close, in the states %s", states).isEqualTo(1);
  }
}
