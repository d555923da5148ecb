package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testkit.ElectionWiringContract;
import io.github.electionpolicy.testkit.ObservedStartup;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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
  private static final AtomicInteger scenarios = new AtomicInteger();

  @BeforeContainer
  static void startServer() {
    api = new MockApi().answeringAccessReviews();
  }

  @AfterContainer
  static void stopServer() throws Exception {
    api.close();
  }

  @Override
  public ObservedStartup startUp(Environment environment, Substrate substrate) throws Exception {
    AtomicBoolean startedUnelected = new AtomicBoolean();
    LeaderService reconciler = LeaderService.of(term -> {
      if (!term.isElected()) {
        startedUnelected.set(true);
      }
    }, () -> { });
    // A replica of its own per start-up: a request that a previous start-up's runner sends late is not counted.
    try (ReplicaLink replica = api.fixture.replica("wiring-" + scenarios.incrementAndGet());
        ElectionRunner runner = ElectionRunner.builder()
        .client(replica.client())
        .decide(ElectionPolicy.defaults(), environment, substrate)
        .settings(MockApi.fastSettings("wiring").build())
        .service(reconciler)
        .start()) {
      boolean requested = Replica.awaitTrue(
          () -> replica.requestCount() > 0 || startedUnelected.get(), Duration.ofSeconds(5));
      boolean contended = requested && replica.requestCount() > 0;
      return ObservedStartup.of(contended, startedUnelected.get())
          .withLoggedSummary(runner.decision().summary());
    }
  }
}
