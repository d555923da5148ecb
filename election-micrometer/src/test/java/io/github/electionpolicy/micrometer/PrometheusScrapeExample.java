package io.github.electionpolicy.micrometer;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testsupport.Await;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runnable example: two replicas of a controller elect a leader on an embedded API server (the testkit's
 * {@link LeaseApi}), each with its own Prometheus registry as two pods would have, and the example prints
 * what Prometheus would scrape from each. Run it with {@code mvn -B -q -pl election-micrometer exec:java};
 * {@link PrometheusScrapeExampleTest} runs it in every build.
 */
public final class PrometheusScrapeExample {

  static final String LEASE = "orders-controller";
  private static final Duration WAIT = Duration.ofSeconds(30);

  private PrometheusScrapeExample() {}

  /**
   * Runs the election and prints both scrapes to standard output.
   *
   * @param args none
   * @throws InterruptedException if interrupted while waiting for the election
   */
  public static void main(String[] args) throws InterruptedException {
    run(System.out);
  }

  /** Runs the election, prints each replica's scrape to {@code out}, and returns them by replica. */
  static Map<String, String> run(PrintStream out) throws InterruptedException {
    Map<String, String> scrapes = new LinkedHashMap<>();
    try (LeaseApi api = LeaseApi.builder().start()) {
      List<ElectionRunner> runners = new ArrayList<>();
      try {
        Map<String, PrometheusMeterRegistry> registries = new LinkedHashMap<>();
        for (String identity : List.of("orders-1", "orders-2")) {
          PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
          registries.put(identity, registry);
          runners.add(startReplica(api.replica(identity).client(), settings(api.namespace(), identity), registry));
        }
        // Until one replica leads and has renewed a few times, so every meter has a value worth showing.
        awaitRenewals(registries.values(), 3);
        registries.forEach((identity, registry) -> {
          String scrape = registry.scrape();
          scrapes.put(identity, scrape);
          out.println("# ---- scrape of " + identity + " ----");
          out.print(scrape);
        });
      } finally {
        // Before the API server stops, so the leader releases the Lease as a controller would on shutdown.
        runners.forEach(ElectionRunner::close);
      }
    }
    return scrapes;
  }

  // docs/metrics.md shows this method (MetricsDocsTest checks it is the same).
  // metrics-example:start
  static ElectionRunner startReplica(KubernetesClient client, LeaseSettings settings, MeterRegistry registry) {
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);                 // before or after start: the meters appear once both happened
    return metrics.start(ElectionRunner.builder()   // adds its listener to the builder, then starts the runner
        .client(client)
        .decide(ElectionPolicy.defaults(), Environment.of(Map.of()), Substrate.usingKubernetesApi("kubernetes"))
        .settings(settings)
        .service(LeaderService.of(term -> { }, () -> { })));
  }
  // metrics-example:end

  private static LeaseSettings settings(String namespace, String identity) {
    return LeaseSettings.builder()
        .leaseName(LEASE)
        .namespace(namespace)
        .identity(identity)
        // Short enough to elect in a moment, long enough that a loaded machine does not move the Lease between
        // the two scrapes.
        .leaseDuration(Duration.ofSeconds(6))
        .renewDeadline(Duration.ofSeconds(4))
        .retryPeriod(Duration.ofMillis(300))
        .lossPolicy(LossPolicy.recontend())
        .build();
  }

  private static void awaitRenewals(Iterable<PrometheusMeterRegistry> registries, long renewals)
      throws InterruptedException {
    boolean renewed = Await.holds(() -> {
      for (PrometheusMeterRegistry registry : registries) {
        if (registry.get(ElectionMetrics.RENEW_DURATION).timer().count() >= renewals) {
          return true;
        }
      }
      return false;
    }, WAIT);
    if (!renewed) {
      throw new IllegalStateException("no replica renewed the Lease " + renewals + " times within " + WAIT);
    }
  }
}
