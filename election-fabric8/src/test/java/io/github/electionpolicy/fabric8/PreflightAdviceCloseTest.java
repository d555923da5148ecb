package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The RBAC preflight's advice, the reviews it sends after its verdict ({@code watch}; {@code create} on events on
 * the access reviews' path), against a review that never returns, as the rules review that commit 756961e bounded
 * (from the adversarial review h-attack7).
 */
class PreflightAdviceCloseTest {

  private final ServiceLog log = new ServiceLog();

  /** Rules that allow the required verbs on leases and not watch: the watch review is sent after the verdict. */
  private static MockResponse rulesWithoutWatch() {
    var review = LeaseRules.question(MockApi.NAMESPACE);
    var status = new io.fabric8.kubernetes.api.model.authorization.v1.SubjectRulesReviewStatus();
    status.setIncomplete(false);
    status.setResourceRules(List.of(new io.fabric8.kubernetes.api.model.authorization.v1.ResourceRuleBuilder()
        .withApiGroups("coordination.k8s.io").withResources("leases").withVerbs("get", "create", "update")
        .build()));
    review.setStatus(status);
    return new MockResponse().setResponseCode(201).setHeader("Content-Type", "application/json")
        .setBody(io.fabric8.kubernetes.client.utils.Serialization.asJson(review));
  }

  /**
   * FINDING 2 (h-attack7). Commit 756961e gave the preflight a deadline because a review was seen never to return
   * (fabric8's blocking {@code create} waiting on a future the JDK client never completed, its timeout
   * notwithstanding). The deadline and the runner's close interrupt the preflight's own thread (and, through
   * LeaseAccess, the access reviews it waits for), but not the advice it leaves behind: the {@code watch} review
   * that {@code firstAttemptOver} hands to the I/O pool as a bare task (RbacPreflight.askWatch), and the events
   * review once its verdict is wanted, are no call of the transport's: nothing cancels them. One that never returns
   * keeps a worker and a place among the JVM's {@value SharedPools#IO_MAX_CALLS} Lease calls for ever, after the
   * runner's close and its {@code STOPPED}: a thread of the runner left after STOPPED (the invariant), and a place
   * each runner started and closed that way never gives back (a controller that restarts its runner, a thousand
   * elections started at once as in the benchmark of 756961e). Here an interceptor holds the watch review until
   * interrupted; the runner leads, is closed and stops; the review is never interrupted.
   *
   * <p>Fixed: every review the preflight runs on the I/O pool, the advice included, is a call of the transport
   * until it ends (Fabric8LeaseTransport.review), so its close interrupts it as it does the preflight.
   */
  @Test
  void aWatchReviewThatNeverReturnsIsCutShortByTheRunnersClose() throws Exception {
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Interceptor holds = new Interceptor() {
      @Override
      public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        String body = request.bodyString();
        if (!request.uri().getPath().endsWith("selfsubjectaccessreviews") || body == null
            || !body.contains("\"watch\"")) {
          return;
        }
        held.countDown();
        try {
          release.await(); // as a review that never returns
        } catch (InterruptedException e) {
          interrupted.countDown();
          Thread.currentThread().interrupt();
        }
      }
    };
    try (MockApi api = new MockApi(delegate -> new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            return MockApi.isRulesReview(request) ? rulesWithoutWatch() : delegate.dispatch(request);
          }
        });
        KubernetesClient client = new KubernetesClientBuilder()
            .withConfig(new ConfigBuilder(Config.empty()).withMasterUrl(api.url()).withNamespace(MockApi.NAMESPACE)
                .build())
            .withHttpClientFactory(new JdkHttpClientFactory())
            .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("holds", holds)).build()) {
      Replica a = Replica.start("a", client, MockApi.fastSettings("a").build(), log);
      try {
        assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(20))).as("leads").isTrue();
        assertThat(held.await(20, TimeUnit.SECONDS)).as("its watch review, sent after the verdict, is held")
            .isTrue();
        a.close();
        assertThat(a.runner.awaitStopped(Duration.ofSeconds(10))).as("STOPPED").isTrue();
        assertThat(Await.holds(() -> interrupted.getCount() == 0, Duration.ofSeconds(10)))
            .as("the held watch review is cut short by the close (else its worker and its place stay for ever)")
            .isTrue();
      } finally {
        release.countDown();
        a.close();
      }
    }
  }
}
