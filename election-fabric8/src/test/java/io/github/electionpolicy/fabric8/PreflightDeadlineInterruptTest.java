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
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What held in the adversarial review h-attack7 of the preflight's deadline (commit 756961e): its interrupt stays
 * with the preflight's own task, and the verdict is reported once however the deadline and the answer race.
 */
class PreflightDeadlineInterruptTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  /**
   * The deadline interrupts the preflight's worker through its future ({@code cancel(true)}): the interrupt is
   * delivered while that task runs, and the pool clears it before the worker's next task, another runner's
   * review or Lease call. Here the I/O pool has a single worker, so its next task runs on the interrupted thread.
   */
  @Test
  void theDeadlinesInterruptNeverReachesTheWorkersNextTask() throws Exception {
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    Interceptor holds = new Interceptor() {
      @Override
      public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        if (!request.uri().getPath().endsWith("selfsubjectrulesreviews")) {
          return;
        }
        held.countDown();
        try {
          new CountDownLatch(1).await(); // as a review that never returns
        } catch (InterruptedException e) {
          interrupted.countDown();
          Thread.currentThread().interrupt();
        }
      }
    };
    ExecutorService oneWorker = Executors.newSingleThreadExecutor();
    try (KubernetesClient client = new KubernetesClientBuilder()
            .withConfig(new ConfigBuilder(Config.empty()).withMasterUrl(api.url()).withNamespace(MockApi.NAMESPACE)
                .build())
            .withHttpClientFactory(new JdkHttpClientFactory())
            .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("holds", holds)).build();
        Fabric8LeaseTransport transport = new Fabric8LeaseTransport(client, MockApi.NAMESPACE,
            MockApi.fastSettings("a").build(), oneWorker)) {
      CompletableFuture<Optional<LeaseAccessDeniedException>> verdict = new CompletableFuture<>();
      transport.preflightDeadline(Duration.ofMillis(300));
      transport.preflight(verdict::complete, verdict::completeExceptionally);
      assertThat(held.await(20, TimeUnit.SECONDS)).isTrue();
      assertThat(verdict.get(20, TimeUnit.SECONDS)).as("unknown past the deadline").isEmpty();
      assertThat(interrupted.await(20, TimeUnit.SECONDS)).isTrue();
      // The next task of the one worker: the preflight's (and the access reviews it went on to, all refused now)
      // are over before it runs.
      boolean nextTaskInterrupted = oneWorker.submit(() -> Thread.currentThread().isInterrupted())
          .get(20, TimeUnit.SECONDS);
      assertThat(nextTaskInterrupted).as("the worker's next task runs uninterrupted").isFalse();
    } finally {
      oneWorker.shutdownNow();
    }
  }

  /**
   * A verdict that comes as the deadline passes is reported once, whichever wins: the deadline's and the
   * review's report meet on one flag. Many preflights whose deadline is about their answer's time.
   */
  @Test
  void aVerdictRacingTheDeadlineIsReportedOnce() throws Exception {
    int preflights = 40;
    List<AtomicInteger> reports = new CopyOnWriteArrayList<>();
    try (Fabric8LeaseTransport transport = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
        MockApi.fastSettings("a").build(), SharedPools.io())) {
      // Warm the client, so the answers come in about the same few milliseconds as the deadlines below.
      CompletableFuture<Optional<LeaseAccessDeniedException>> warm = new CompletableFuture<>();
      transport.preflight(warm::complete, warm::completeExceptionally);
      warm.get(20, TimeUnit.SECONDS);
      for (int i = 0; i < preflights; i++) {
        AtomicInteger reported = new AtomicInteger();
        reports.add(reported);
        transport.preflightDeadline(Duration.ofMillis(i % 10));
        transport.preflight(denied -> reported.incrementAndGet(), failure -> reported.incrementAndGet());
      }
      assertThat(Await.holds(() -> reports.stream().allMatch(r -> r.get() >= 1), Duration.ofSeconds(30)))
          .as("each preflight reported").isTrue();
      // Past every deadline and every answer (a read through the same client answered after them all).
      CompletableFuture<LeaseStep.Answer> read = new CompletableFuture<>();
      transport.read((answer, failure) -> read.complete(answer));
      read.get(20, TimeUnit.SECONDS);
      assertThat(reports).allSatisfy(reported -> assertThat(reported).hasValue(1));
    }
  }
}
