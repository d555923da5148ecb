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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The places of the JVM's Lease calls ({@link SharedPools#leaseRequests()}) are shared by every runner of the JVM
 * (from the adversarial review h-attack7).
 */
class LeaseCallPlacesIsolationTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  /**
   * FINDING 1 (h-attack7). A Lease request keeps its place among the JVM's {@value SharedPools#IO_MAX_CALLS} Lease
   * calls until its exchange ends (LeaseHttp.Request: a cancel does not give it back once the request was handed
   * to the HTTP client, since fabric8 aborts no exchange). That is bounded by the request timeout only once the
   * request reached the JDK client: a request held before it, in an interceptor of the runner's client
   * ({@code Interceptor.before}: a token refresh, an exec credential plugin that hangs; the scenario of finding 1
   * of h-attack4, whose fix keeps the hand-over <em>threads</em> free but not the places), never ends. Its elector
   * times it out and sends the next one a retry period later, which hangs too, each keeping a place: after {@value
   * SharedPools#IO_MAX_CALLS} retries (minutes, at the defaults) one runner whose credentials hang holds every
   * place of the JVM, and every other runner's reads and renewals, on healthy clients, are refused at once
   * ("64 Lease calls are in flight in this JVM already"): healthy leaders lose their terms, followers never take
   * over. Here the stuck runner's 64 requests are each cancelled, as its elector does at each timeout; another
   * runner's read, on its own healthy client, is then refused.
   *
   * <p>Fixed: a bound per runner below the JVM's ({@value SharedPools#ELECTION_MAX_CALLS} places: a transport needs
   * one request and one watch opening at a time, plus the exchanges it gave up until their timeout), so a runner
   * whose calls never end is refused its own next call, not the others'.
   */
  @Test
  void aRunnerWhoseRequestsNeverEndCannotTakeTheOtherRunnersPlaces() throws Exception {
    ThreadPoolExecutor pool = SharedPools.elastic(SharedPools.HAND_OVER_THREADS, "test-handover-");
    java.util.concurrent.Executor handOver = SharedPools.handOverTo(pool);
    SharedPools.InFlight requests = new SharedPools.InFlight(SharedPools.IO_MAX_CALLS, "Lease calls");
    SharedPools.InFlight events = new SharedPools.InFlight(SharedPools.EVENTS_MAX_CALLS, "leadership Event writes");
    CountDownLatch unhang = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger entered = new java.util.concurrent.atomic.AtomicInteger();
    Interceptor hangs = new Interceptor() {
      @Override
      public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        entered.incrementAndGet();
        try {
          unhang.await(); // as a credential plugin that never returns
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
      // The stuck runner's reads, one per retry: each hangs in the interceptor (on the hand-over threads, then on
      // spilled workers), past the point where a cancel gives its place back; its elector gives each up at its
      // timeout.
      List<LeaseTransport.Call> calls = new java.util.ArrayList<>();
      java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
      for (int i = 0; i < SharedPools.IO_MAX_CALLS; i++) {
        calls.add(stuck.read((answer, failure) -> refused.incrementAndGet()));
      }
      assertThat(io.github.electionpolicy.testsupport.Await.holds(
          () -> entered.get() + refused.get() == SharedPools.IO_MAX_CALLS, Duration.ofSeconds(30)))
          .as("every request of the stuck runner hangs or is refused").isTrue();
      calls.forEach(LeaseTransport.Call::cancel);

      List<Throwable> failures = new CopyOnWriteArrayList<>();
      CompletableFuture<LeaseStep.Answer> answered = new CompletableFuture<>();
      healthy.read((answer, failure) -> {
        if (failure != null) {
          failures.add(failure);
        }
        answered.complete(answer);
      });
      LeaseStep.Answer answer = answered.get(20, TimeUnit.SECONDS);
      assertThat(failures).as("another runner's read, on its own healthy client").isEmpty();
      assertThat(answer).isNotInstanceOf(LeaseStep.Answer.Failed.class);
    } finally {
      unhang.countDown();
      pool.shutdownNow();
    }
  }
}
