package io.github.electionpolicy.micrometer;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;

/**
 * One controller process of a test: its own link to the Lease API, its own registry, a runner started through
 * {@link ElectionMetrics}. The accessors read the registry, never the runner, so the tests check the meters.
 */
final class MeteredReplica implements AutoCloseable {

  static final String LEASE = "orders-controller";
  static final Duration LEASE_DURATION = Duration.ofSeconds(2);
  static final Duration RENEW_DEADLINE = Duration.ofMillis(1500);
  static final ElectionDecision CONTEND = ElectionPolicy.defaults()
      .decide(Environment.of(Map.of()), Substrate.usingKubernetesApi("kubernetes"));
  static final ElectionDecision KILL_SWITCH_OFF = ElectionPolicy.defaults()
      .decide(Environment.of(Map.of("LEADER_ELECTION_ENABLED", "false")), Substrate.usingKubernetesApi("kubernetes"));

  final ReplicaLink link;
  final MeterRegistry registry;
  final ElectionRunner runner;
  private final Tags tags;

  private MeteredReplica(ReplicaLink link, MeterRegistry registry, ElectionRunner runner, Tags tags) {
    this.link = link;
    this.registry = registry;
    this.runner = runner;
    this.tags = tags;
  }

  /** Starts a contending replica on {@code api}, bound to a registry of its own before it starts. */
  static MeteredReplica start(LeaseApi api, String identity) {
    ReplicaLink link = api.replica(identity);
    MeterRegistry registry = new SimpleMeterRegistry();
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(registry);
    ElectionRunner runner = metrics.start(ElectionRunner.builder()
        .client(link.client())
        .decision(CONTEND)
        .settings(fastSettings(api.namespace(), identity))
        .service(LeaderService.of(term -> { }, () -> { })));
    return new MeteredReplica(link, registry, runner, Tags.of("name", LEASE, "namespace", api.namespace()));
  }

  /** Starts a replica and waits until it leads, so one started next follows. */
  static MeteredReplica startLeader(LeaseApi api, String identity) throws InterruptedException {
    MeteredReplica replica = start(api, identity);
    if (!Await.holds(replica::leads)) {
      replica.close();
      throw new AssertionError(identity + " did not lead: " + replica.runner.state());
    }
    return replica;
  }

  static LeaseSettings fastSettings(String namespace, String identity) {
    return LeaseSettings.builder()
        .leaseName(LEASE)
        .namespace(namespace)
        .identity(identity)
        .leaseDuration(LEASE_DURATION)
        .renewDeadline(RENEW_DEADLINE)
        .retryPeriod(Duration.ofMillis(200))
        .stopTimeout(Duration.ofSeconds(1))
        .lossPolicy(LossPolicy.recontend())
        .build();
  }

  /** Whether the runner itself leads (for waiting; assertions read the meters). */
  boolean leads() {
    return runner.state().kind() == ElectionState.Kind.LEADING;
  }

  double masterStatus() {
    return registry.get(ElectionMetrics.MASTER_STATUS).tags(tags).gauge().value();
  }

  double transitions() {
    return registry.get(ElectionMetrics.TRANSITIONS).tags(tags).functionCounter().count();
  }

  double renewFailures() {
    return registry.get(ElectionMetrics.RENEW_FAILURES).tags(tags).functionCounter().count();
  }

  long renewals() {
    return registry.get(ElectionMetrics.RENEW_DURATION).tags(tags).timer().count();
  }

  double lastSuccessAgeSeconds() {
    return registry.get(ElectionMetrics.LAST_SUCCESS_AGE).tags(tags).gauge().value();
  }

  Gauge decision() {
    return registry.get(ElectionMetrics.DECISION).tags(tags).gauge();
  }

  @Override
  public void close() {
    runner.close();
  }
}
