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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Finding 3 (h-attack8): the fix of finding 1 of h-attack7 gives each transport a share of
 * {@value SharedPools#ELECTION_MAX_CALLS} of the JVM's {@value SharedPools#IO_MAX_CALLS} Lease-call places
 * ({@code SharedPools.InFlight.share}), "the places among the 64 one runner's transport may hold at once". Only its
 * asynchronous requests and watch openings take places of the share: the tasks it runs on {@link SharedPools#io()}
 * (the preflight itself and, since 1f1f6b2, each of its reviews: three access reviews, the events review, the watch
 * review) take places of the JVM's bound directly ({@code BoundedCalls} over the same {@code LEASE_CALLS}) and none
 * of the runner's. A runner whose client hangs (an interceptor that never returns, the scenario of that finding)
 * so holds its 8 reads plus the preflight and its reviews: 12 of the JVM's places here (13 with the watch
 * review), not 8, and they are given
 * back only at its close (the preflight's 15 s deadline interrupts the preflight's own task, not the reviews it
 * handed to the pool). Five such runners take every place, where the share was meant to need eight.
 *
 * <p>Scenario: the server refuses the rules review (403, so the access reviews decide), and the runner's client
 * hangs in an interceptor on every other request; the preflight runs and reads are sent until its share refuses
 * them (before finding 4's fix each read cancelled at its timeout kept its place, as the elector's retries did).
 *
 * <p>Suggested fix: run the transport's pool tasks under its share too, e.g. a {@code BoundedCalls} over the raw
 * workers and the share (not over the JVM's bound again, which would count each place twice), or count the share
 * only (a share-local counter) around {@code io.execute} in {@code Fabric8LeaseTransport.review} and
 * {@code preflight}.
 *
 * <p>Fixed: {@code Fabric8LeaseTransport.executeInShare} runs the preflight and each review on the pool holding a
 * place of the share ({@code InFlight.tryAcquireHere}: of the share only, the pool holding the JVM's) until its
 * worker is done with it; a review the share refuses runs on the preflight's thread, as one the pool refuses.
 */
class RunnerShareOfPlacesTest {

  @RegisterExtension
  final MockApi api = new MockApi(delegate -> new io.fabric8.mockwebserver.http.Dispatcher() {
    @Override
    public io.fabric8.mockwebserver.http.MockResponse dispatch(io.fabric8.mockwebserver.http.RecordedRequest r) {
      return MockApi.isRulesReview(r) ? MockApi.rulesReviewRefused() : delegate.dispatch(r);
    }
  });

  @Test
  void aRunnerWhoseCallsNeverEndHoldsAtMostItsShareOfTheJvmsPlaces() throws Exception {
    ThreadPoolExecutor handOverPool = SharedPools.elastic(SharedPools.HAND_OVER_THREADS, "test-handover-");
    java.util.concurrent.Executor handOver = SharedPools.handOverTo(handOverPool);
    ExecutorService workers = Executors.newCachedThreadPool();
    SharedPools.InFlight requests = new SharedPools.InFlight(SharedPools.IO_MAX_CALLS, "Lease calls");
    SharedPools.InFlight events = new SharedPools.InFlight(SharedPools.EVENTS_MAX_CALLS, "leadership Event writes");
    // As SharedPools.io(): the pool's tasks within the same JVM bound as the asynchronous requests.
    ExecutorService io = new BoundedCalls(workers, requests);
    CountDownLatch unhang = new CountDownLatch(1);
    AtomicInteger entered = new AtomicInteger();
    Interceptor hangs = new Interceptor() {
      @Override
      public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        if (request.uri().getPath().endsWith("selfsubjectrulesreviews")) {
          return;
        }
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
            MockApi.fastSettings("stuck").leadershipEvents(true).build(), io, handOver, requests, events)) {
      stuck.preflight(verdict -> { }, failure -> { });
      // The access reviews (get, create, update) hang on the pool, beside the preflight that waits for them.
      assertThat(Await.holds(() -> entered.get() >= LeaseAccess.REQUIRED_VERBS.size(), Duration.ofSeconds(30)))
          .as("the access reviews hang").isTrue();
      // Reads that hang, until its share refuses the next (kept, not cancelled: a cancelled one whose exchange has
      // not started gives its place back a request timeout later, since finding 4 of h-attack8).
      AtomicInteger refused = new AtomicInteger();
      List<LeaseTransport.Call> reads = new ArrayList<>();
      for (int i = 0; i < SharedPools.ELECTION_MAX_CALLS + 1; i++) {
        int before = entered.get() + refused.get();
        reads.add(stuck.read((answer, failure) -> {
          if (failure != null) {
            refused.incrementAndGet();
          }
        }));
        assertThat(Await.holds(() -> entered.get() + refused.get() > before, Duration.ofSeconds(30)))
            .as("read %s hangs or is refused", i).isTrue();
      }
      assertThat(refused.get()).as("the share refuses the runner's next read").isPositive();
      assertThat(requests.inFlight())
          .as("the JVM's Lease-call places held by one runner whose calls never end")
          .isLessThanOrEqualTo(SharedPools.ELECTION_MAX_CALLS);
      reads.forEach(LeaseTransport.Call::cancel);
    } finally {
      unhang.countDown();
      handOverPool.shutdownNow();
      workers.shutdownNow();
    }
  }
}
