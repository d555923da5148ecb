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
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The hand-over pool is shared by every runner of the JVM, and each runner's requests run its own client's
 * interceptors there (from the adversarial review of commit 32fd692, h-attack4).
 */
class HandOverIsolationTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  /**
   * FINDING 1 (h-attack4). {@code SharedPools.handOver()} became a pool of {@value SharedPools#HAND_OVER_THREADS}
   * threads shared by every runner, and fabric8 runs a client's interceptors ({@code Interceptor.before}: a token
   * refresh, an exec credential plugin) on the thread that hands the request over. One runner whose interceptor
   * hangs (its credential plugin waits on a dead endpoint) takes a further hand-over thread at each retry (its
   * timed-out request's thread stays stuck), so after four attempts it holds them all, and every other runner of
   * the JVM, on its own healthy client, could no longer send a read or a renewal: each waited in the queue until its
   * deadline, failed, and a healthy leader lost its term after its renew deadline. Before 32fd692 the hand-overs ran
   * on the unbounded elastic workers, so a hung interceptor held threads of its own runner's requests only. Fixed:
   * a hand-over that waits {@value SharedPools#SPILL_MILLIS} ms for one of the pool's threads runs on an elastic
   * worker instead.
   */
  @Test
  void aHungInterceptorOfOneRunnerDoesNotHoldUpAnotherRunnersRequests() throws Exception {
    ThreadPoolExecutor pool = SharedPools.elastic(SharedPools.HAND_OVER_THREADS, "test-handover-");
    java.util.concurrent.Executor handOver = SharedPools.handOverTo(pool);
    SharedPools.InFlight requests = new SharedPools.InFlight(64, "Lease requests");
    SharedPools.InFlight events = new SharedPools.InFlight(16, "leadership Event writes");
    CountDownLatch unhang = new CountDownLatch(1);
    CountDownLatch hung = new CountDownLatch(SharedPools.HAND_OVER_THREADS);
    Interceptor hangs = new Interceptor() {
      @Override
      public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        hung.countDown();
        try {
          unhang.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    };
    Config config = new ConfigBuilder(Config.empty()).withMasterUrl(api.url()).withNamespace(MockApi.NAMESPACE)
        .build();
    try (KubernetesClient stuckClient = new KubernetesClientBuilder().withConfig(config)
            .withHttpClientFactory(new JdkHttpClientFactory())
            .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("hangs", hangs)).build();
        Fabric8LeaseTransport stuck = new Fabric8LeaseTransport(stuckClient, MockApi.NAMESPACE,
            MockApi.fastSettings("stuck").build(), SharedPools.io(), handOver, requests, events);
        Fabric8LeaseTransport healthy = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
            MockApi.fastSettings("healthy").build(), SharedPools.io(), handOver, requests, events)) {
      // The stuck runner's reads, one per retry (each earlier one timed out and was given up by its elector).
      for (int i = 0; i < SharedPools.HAND_OVER_THREADS; i++) {
        stuck.read((answer, failure) -> { });
      }
      assertThat(hung.await(20, TimeUnit.SECONDS)).as("the stuck runner's hand-overs hang").isTrue();

      CompletableFuture<LeaseStep.Answer> answered = new CompletableFuture<>();
      healthy.read((answer, failure) -> answered.complete(answer));
      // Its request timeout (fastSettings) and then some: a healthy runner's read is answered by then.
      Duration patience = MockApi.fastSettings("healthy").build().requestTimeout().multipliedBy(3);
      assertThat(io.github.electionpolicy.testsupport.Await.holds(answered::isDone, patience))
          .as("another runner's read, on its own healthy client, is sent and answered").isTrue();
      assertThat(answered.get()).isNotInstanceOf(LeaseStep.Answer.Failed.class);
    } finally {
      unhang.countDown();
      pool.shutdownNow();
    }
  }
}
