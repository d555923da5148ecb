package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.josdk.sample.Widget;
import io.github.electionpolicy.josdk.sample.WidgetReconciler;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * Starts replicas of the sample operator the way its {@code main} does, each with its own client from the
 * embedded API server, fast lease timings and a shared {@link OperatorLog}; closes them after the test.
 */
final class OperatorReplicas implements AutoCloseable {

  static final String LEASE = "widget-operator";
  static final Substrate SUBSTRATE = Substrate.usingKubernetesApi("kubernetes");
  // Fast timings; leaseDuration - renewDeadline = 1 s is the stop timeout, room for JOSDK's stop on 2 cores.
  static final Duration LEASE_DURATION = Duration.ofSeconds(3);
  static final Duration RENEW_DEADLINE = Duration.ofSeconds(2);
  static final Duration RETRY_PERIOD = Duration.ofMillis(250);

  final LeaseApiExtension api;
  final OperatorLog log = new OperatorLog();
  private final List<ElectionRunner> started = new CopyOnWriteArrayList<>();

  OperatorReplicas(LeaseApiExtension api) {
    this.api = api;
  }

  /** One replica: its link to the server, its runner and its operator service. */
  record Replica(String identity, ReplicaLink link, ElectionRunner runner, OperatorService service,
      List<Integer> exits) {}

  static LeaseSettings.Builder settings(String identity) {
    return LeaseSettings.builder()
        .leaseName(LEASE)
        .identity(identity)
        .leaseDuration(LEASE_DURATION)
        .renewDeadline(RENEW_DEADLINE)
        .retryPeriod(RETRY_PERIOD);
  }

  /** A contending replica whose loss policy is {@code EXIT} with an exiter that records the status. */
  Replica start(String identity) {
    return start(identity, options -> options);
  }

  /** What a test may change about a replica; the defaults are those of {@link #start(String)}. */
  static final class Options {
    Map<String, String> environment = Map.of();
    LossPolicy lossPolicy;                                   // null: EXIT, recorded in Replica.exits
    Function<OperatorLog, WidgetReconciler.Observer> observer = OperatorLog::reconciliations;
    UnaryOperator<LeaseSettings.Builder> settings = UnaryOperator.identity();
    ReconcilerRegistration registration;                     // null: register the sample's reconciler
    Consumer<ConfigurationServiceOverrider> configuration = config -> { };
  }

  /** A replica started as {@code main} would, with what {@code options} changes. */
  Replica start(String identity, UnaryOperator<Options> options) {
    Options o = options.apply(new Options());
    ReplicaLink link = api.replica(identity);
    List<Integer> exits = new CopyOnWriteArrayList<>();
    LossPolicy policy = o.lossPolicy != null ? o.lossPolicy : LossPolicy.exit(exits::add);
    WidgetReconciler.Observer seen = o.observer.apply(log);
    ReconcilerRegistration registration = o.registration != null ? o.registration
        : (operator, term) -> operator.register(new WidgetReconciler(term, seen));
    OperatorService service = OperatorService.builder()
        .client(link.client())
        .configuration(o.configuration)
        .reconcilers(registration)
        .build();
    ElectionRunner runner = ElectionRunner.builder()
        .client(link.client())
        .decide(ElectionPolicy.defaults(), Environment.of(o.environment), SUBSTRATE)
        .settings(o.settings.apply(settings(identity).namespace(api.namespace()).lossPolicy(policy)).build())
        .service(log.runs(identity))
        .service(service)
        .start();
    started.add(runner);
    return new Replica(identity, link, runner, service, exits);
  }

  void createWidget(String name) {
    api.client().resources(Widget.class).inNamespace(api.namespace())
        .resource(Widget.named(api.namespace(), name, "blue")).create();
  }

  /** The ConfigMap the reconciler wrote for {@code widget}, as the server has it. */
  Optional<ConfigMap> marker(String widget) {
    return Optional.ofNullable(api.client().configMaps().inNamespace(api.namespace())
        .withName("widget-" + widget).get());
  }

  @Override
  public void close() {
    for (ElectionRunner runner : started) {
      runner.close();
    }
  }
}
