package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.testkit.ElectionWiringContract;
import io.github.electionpolicy.testkit.ObservedStartup;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The adapter passes the testkit's wiring contract, the one it offers downstream projects: started through
 * {@link ElectionRunner.Builder#decide} with the real client against the mock API server, it contends
 * (a Lease request reaches the server, no reconciler starts before a term is elected) exactly on the rows of
 * the truth table that say so, and otherwise starts its reconcilers at once without a single request.
 */
class ElectionRunnerWiringProperties implements ElectionWiringContract {

  // jqwik does not run JUnit Jupiter extensions, so the server lives for the whole container.
  private static MockApi api;
  private static KubernetesClient client;

  @BeforeContainer
  static void startServer() {
    api = new MockApi().answeringAccessReviews();
    client = api.client();
  }

  @AfterContainer
  static void stopServer() throws Exception {
    api.close();
  }

  @Override
  public ObservedStartup startUp(Environment environment, Substrate substrate) throws Exception {
    int requestsBefore = api.server.getRequestCount();
    AtomicBoolean startedUnelected = new AtomicBoolean();
    LeaderService reconciler = LeaderService.of(term -> {
      if (!term.isElected()) {
        startedUnelected.set(true);
      }
    }, () -> { });
    try (ElectionRunner runner = ElectionRunner.builder()
        .client(client)
        .decide(ElectionPolicy.defaults(), environment, substrate)
        .settings(MockApi.fastSettings("wiring").build())
        .service(reconciler)
        .start()) {
      boolean requested = Replica.awaitTrue(
          () -> api.server.getRequestCount() > requestsBefore || startedUnelected.get(), Duration.ofSeconds(5));
      boolean contended = requested && api.server.getRequestCount() > requestsBefore;
      return ObservedStartup.of(contended, startedUnelected.get())
          .withLoggedSummary(runner.decision().summary());
    }
  }
}
