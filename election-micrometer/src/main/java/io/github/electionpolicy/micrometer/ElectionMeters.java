package io.github.electionpolicy.micrometer;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The meters of one started runner, registered in each registry the binder is bound to. */
final class ElectionMeters {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionMetrics.class);
  private static final double NANOS_PER_SECOND = 1e9;

  private final ElectionRunner runner;
  private final EventCounts events;
  private final long startNanos;
  private final Tags tags;
  private final String lease;

  ElectionMeters(ElectionRunner runner, Tags extraTags, EventCounts events, long startNanos) {
    this.runner = runner;
    this.events = events;
    this.startNanos = startNanos;
    String name = runner.leaseName().orElse("");
    String namespace = runner.namespace().orElse("");
    this.tags = extraTags.and(ElectionMetrics.TAG_NAME, name, ElectionMetrics.TAG_NAMESPACE, namespace);
    this.lease = namespace.isEmpty() ? (name.isEmpty() ? "no Lease" : name) : namespace + "/" + name;
  }

  /** A few words for messages: the runner's identity and Lease. */
  String describe() {
    return "the runner " + runner.identity() + " (" + lease + ")";
  }

  void registerIn(MeterRegistry registry) {
    if (registry.find(ElectionMetrics.MASTER_STATUS).tags(tags).meter() != null) {
      // Micrometer would hand back the meters already there, which read another runner's state.
      LOG.warn("Not registering the election metrics of {} in {}: its meters with tags {} are registered "
          + "already, by another ElectionMetrics for the same Lease; fix: give each ElectionMetrics an extra "
          + "tag that tells them apart, e.g. new ElectionMetrics(Tags.of(\"replica\", identity))", describe(),
          registry.getClass().getSimpleName(), tags);
      return;
    }
    Gauge.builder(ElectionMetrics.MASTER_STATUS, runner, ElectionMeters::masterStatus)
        .description("1 while this process leads the Lease, else 0")
        .tags(tags)
        .strongReference(true)
        .register(registry);
    FunctionCounter.builder(ElectionMetrics.TRANSITIONS, events, EventCounts::transitions)
        .description("Times this process became the leader (each new term)")
        .tags(tags)
        .register(registry);
    FunctionCounter.builder(ElectionMetrics.RENEW_FAILURES, events, EventCounts::renewFailures)
        .description("Renewals of the Lease that failed; the leader retries until its renew deadline")
        .tags(tags)
        .register(registry);
    Timer renewals = Timer.builder(ElectionMetrics.RENEW_DURATION)
        .description("Round trip of each successful renewal of the Lease")
        .tags(tags)
        .register(registry);
    events.recordRenewalsIn(renewals);
    if (runner.decision().contends()) {
      Gauge.builder(ElectionMetrics.LAST_SUCCESS_AGE, this, ElectionMeters::lastSuccessAgeSeconds)
          .description("Seconds since the last successful Lease call was sent (since the start before the first)")
          .baseUnit("seconds")
          .tags(tags)
          .strongReference(true)
          .register(registry);
    }
    ElectionDecision decision = runner.decision();
    Gauge.builder(ElectionMetrics.DECISION, () -> 1)
        .description("The decision this process acts on, in the tags outcome and reasons; always 1")
        .tags(tags)
        .tag(ElectionMetrics.TAG_OUTCOME, decision.outcome().name())
        .tag(ElectionMetrics.TAG_REASONS,
            decision.reasons().stream().map(Enum::name).collect(Collectors.joining(",")))
        .strongReference(true)
        .register(registry);
  }

  private static double masterStatus(ElectionRunner runner) {
    return runner.state().kind() == ElectionState.Kind.LEADING ? 1 : 0;
  }

  private double lastSuccessAgeSeconds() {
    Duration since = runner.health().sinceLastLeaseSuccess()
        .orElseGet(() -> Duration.ofNanos(System.nanoTime() - startNanos));
    return since.toNanos() / NANOS_PER_SECOND;
  }
}
