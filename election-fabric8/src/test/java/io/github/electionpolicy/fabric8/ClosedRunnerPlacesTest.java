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
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Finding 4 (h-attack8): a Lease request keeps its place among the JVM's Lease calls until its exchange ends, even
 * after its transport closed ({@code LeaseHttp.Request}: the close ends the call, but a request already handed to
 * the HTTP client gives its place back only when the exchange completes). A request that hangs before the exchange
 * starts (an interceptor of the runner's client that never returns: the scenario of finding 1 of h-attack7) never
 * completes, so the closed runner's places (up to its share of {@value SharedPools#ELECTION_MAX_CALLS}) stay
 * taken after STOPPED, against "no place of the runner left after STOPPED". The share bounds one runner, not one
 * client: an application that closes a runner whose elections fail and starts a new one on the same client (a
 * restart of its election, a redeploy in the same JVM) leaks {@value SharedPools#ELECTION_MAX_CALLS} places per
 * restart, and after {@value SharedPools#IO_MAX_CALLS} / {@value SharedPools#ELECTION_MAX_CALLS} restarts every
 * other runner's reads and renewals are refused, which the share was meant to prevent.
 *
 * <p>Scenario: eight transports in turn on one client whose interceptor hangs, each sending reads until its share
 * refuses them (each cancelled as its elector gives it up) and then closed; a healthy runner's read is refused.
 *
 * <p>Suggested fix: a request whose hand-over is still inside {@code sendAsync} (the interceptors run there, before
 * any byte reaches the server) gives its place back on cancel or at the transport's close, as the watch open does
 * since finding 3 of h-attack7; only an exchange the HTTP client started keeps it until its timeout.
 *
 * <p>Fixed that way ({@code LeaseHttp.Request.started}), then bounded in time: a request ended inside
 * {@code sendAsync} may already be at the server (fabric8 7's clients send before {@code sendAsync} returns), so it
 * now keeps its place until {@code sendAsync} returns and its exchange ends, or a request timeout after its end if
 * {@code sendAsync} has not returned by then
 * ({@code Fabric8LeaseTransportTest.aRequestCancelledInsideSendAsyncKeepsItsPlaceSoTheServerNeverSeesMoreThanTheBound}).
 * A closed runner's places are so all back within one request timeout of its close, however long its interceptor
 * hangs. The price: a request whose interceptor returns after that goes out without a place (its answer is
 * dropped).
 */
class ClosedRunnerPlacesTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  @Test
  void aClosedRunnerLeavesNoPlaceTakenEvenWhenItsRequestsNeverEnd() throws Exception {
    ThreadPoolExecutor pool = SharedPools.elastic(SharedPools.HAND_OVER_THREADS, "test-handover-");
    java.util.concurrent.Executor handOver = SharedPools.handOverTo(pool);
    SharedPools.InFlight requests = new SharedPools.InFlight(SharedPools.IO_MAX_CALLS, "Lease calls");
    SharedPools.InFlight events = new SharedPools.InFlight(SharedPools.EVENTS_MAX_CALLS, "leadership Event writes");
    CountDownLatch unhang = new CountDownLatch(1);
    AtomicInteger entered = new AtomicInteger();
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
        Fabric8LeaseTransport healthy = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
            MockApi.fastSettings("healthy").build(), SharedPools.io(), handOver, requests, events)) {
      int restarts = SharedPools.IO_MAX_CALLS / SharedPools.ELECTION_MAX_CALLS;
      for (int r = 0; r < restarts; r++) {
        Fabric8LeaseTransport stuck = new Fabric8LeaseTransport(stuckClient, MockApi.NAMESPACE,
            MockApi.fastSettings("stuck").build(), SharedPools.io(), handOver, requests, events);
        AtomicInteger refused = new AtomicInteger();
        // Its elector's reads, one per retry, each given up at its timeout, until its share refuses the next.
        for (int i = 0; i <= SharedPools.ELECTION_MAX_CALLS; i++) {
          int before = entered.get() + refused.get();
          LeaseTransport.Call read = stuck.read((answer, failure) -> {
            if (failure != null) {
              refused.incrementAndGet();
            }
          });
          assertThat(Await.holds(() -> entered.get() + refused.get() > before, Duration.ofSeconds(30)))
              .as("read %s of runner %s hangs or is refused", i, r).isTrue();
          read.cancel();
        }
        stuck.close(); // the runner is STOPPED; the application starts a new one on the same client
      }
      // Each read ended inside sendAsync keeps its place for one request timeout, no longer.
      Duration timeout = MockApi.fastSettings("stuck").build().requestTimeout();
      assertThat(Await.holds(() -> requests.inFlight() == 0, timeout.plusSeconds(20)))
          .as("every place of the closed runners given back within a request timeout (%s), taken: %s", timeout,
              requests.inFlight()).isTrue();
      List<Throwable> failures = new ArrayList<>();
      CompletableFuture<LeaseStep.Answer> answered = new CompletableFuture<>();
      healthy.read((answer, failure) -> {
        if (failure != null) {
          failures.add(failure);
        }
        answered.complete(answer);
      });
      answered.get(20, TimeUnit.SECONDS);
      assertThat(failures).as("a healthy runner's read, after %s closed runners (places taken: %s)", restarts,
          requests.inFlight()).isEmpty();
    } finally {
      unhang.countDown();
      pool.shutdownNow();
    }
  }
}
