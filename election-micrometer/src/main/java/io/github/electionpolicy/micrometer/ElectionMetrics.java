package io.github.electionpolicy.micrometer;

import io.github.electionpolicy.fabric8.ElectionRunner;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Micrometer metrics of one {@link ElectionRunner}: whether it leads (client-go's
 * {@code leader_election_master_status}), how often it became the leader, its failed renewals, how long each
 * renewal took, how long ago its last Lease call succeeded, and the decision it acts on. Every meter is
 * tagged {@code name} (the Lease's name, as client-go's label) and {@code namespace} (the Lease's namespace).
 *
 * <p>One instance measures one runner at a time, and is wired in two steps that may come in either order: {@link
 * #start(ElectionRunner.Builder)} starts the runner through this binder (it adds the binder's own listener to
 * the builder first, so the listener cannot be left out or given to another runner), and {@link
 * #bindTo(MeterRegistry)} binds it to a registry. The meters appear in a registry once both have happened:
 * a registry bound before the runner starts (a framework binds every {@link MeterBinder} when it creates the
 * registry) gets them when it starts.
 *
 * <pre>{@code
 * ElectionMetrics metrics = new ElectionMetrics();
 * metrics.bindTo(registry);                        // before or after start; e.g. a PrometheusMeterRegistry
 * ElectionRunner runner = metrics.start(ElectionRunner.builder()
 *     .client(client)
 *     .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.usingKubernetesApi("kubernetes"))
 *     .settings(LeaseSettings.builder().leaseName("orders-controller").build())
 *     .service(new OrdersReconciler(client)));
 * Runtime.getRuntime().addShutdownHook(new Thread(runner::close));
 * runner.awaitStopped();
 * }</pre>
 *
 * <table>
 *   <caption>The meters (Micrometer names; docs/metrics.md has the Prometheus names)</caption>
 *   <tr><th>name</th><th>type</th><th>value</th></tr>
 *   <tr><td>{@value #MASTER_STATUS}</td><td>gauge</td><td>1 while this runner leads, else 0 (0 too while it
 *       runs unelected)</td></tr>
 *   <tr><td>{@value #TRANSITIONS}</td><td>function counter</td><td>times this runner became the leader
 *       (each new term)</td></tr>
 *   <tr><td>{@value #RENEW_FAILURES}</td><td>function counter</td><td>renewals that failed; the leader keeps
 *       trying until its renew deadline</td></tr>
 *   <tr><td>{@value #RENEW_DURATION}</td><td>timer</td><td>round trip of each successful renewal</td></tr>
 *   <tr><td>{@value #LAST_SUCCESS_AGE}</td><td>gauge, seconds</td><td>since the last successful Lease call
 *       was sent, or since the start before the first; only for a runner that contends</td></tr>
 *   <tr><td>{@value #DECISION}</td><td>gauge, always 1</td><td>the decision, in the tags {@code outcome}
 *       and {@code reasons}</td></tr>
 * </table>
 *
 * <p>A runner that runs unelected has no Lease: its {@code name} is the lease name of its settings if it was
 * given any, else empty, and its {@code namespace} is empty.
 *
 * <p>When the runner stops, its meters go or stay by how it stopped:
 * <ul>
 *   <li>closed ({@link ElectionRunner#close()}): they are removed from every registry this binder was bound
 *       to, by the time {@link ElectionRunner#awaitStopped()} returns, and this binder registers nothing
 *       until it starts the next runner. The binder of the runner that replaces it (same Lease, same
 *       registry: a context stopped and started again) registers its own, even if it binds before the
 *       removal;</li>
 *   <li>stopped on its own (the RBAC preflight denied it, its loss policy stopped it, its election loop
 *       failed; {@link ElectionRunner#isClosed()} is false): they stay and say what is true, not leading and
 *       the age of the last success growing, so the alerts on them fire; until the binder of a running
 *       runner for the same Lease registers in one of the registries, which removes them from all of them
 *       and registers its own. Closing such a runner later changes nothing: it reports no further event.</li>
 * </ul>
 * Once the runner has stopped, the meters no longer refer to it. Two binders whose runners both run for one
 * Lease in one registry would share meters (Micrometer keeps the first of two meters with one name and
 * tags): the second logs a warning, registers nothing there, and takes the first one's place once that has
 * stopped. Two runners for one Lease in one process are a test's or a demo's; the fix is an extra tag that
 * tells them apart, such as {@code Tags.of("replica", identity)}.
 *
 * <p>Thread-safe: bind from any thread; the runner's listener thread counts events and removes the meters,
 * and scrapes read the runner's state. The only user code this class calls is through {@link
 * ElectionRunner.Builder#start()}, which starts the services at once when the runner runs unelected: whatever
 * it throws, an {@link Error} included, reaches the caller of {@link #start(ElectionRunner.Builder)} unchanged
 * and leaves this binder without a runner.
 */
public final class ElectionMetrics implements MeterBinder {

  /** Gauge, client-go's name: 1 while leading, else 0. Prometheus: {@code leader_election_master_status}. */
  public static final String MASTER_STATUS = "leader.election.master.status";
  /** Counter: times this runner became the leader. Prometheus: {@code leader_election_transitions_total}. */
  public static final String TRANSITIONS = "leader.election.transitions";
  /** Counter: failed renewals. Prometheus: {@code leader_election_renew_failures_total}. */
  public static final String RENEW_FAILURES = "leader.election.renew.failures";
  /** Timer: round trip of each successful renewal. Prometheus: {@code leader_election_renew_duration_seconds}. */
  public static final String RENEW_DURATION = "leader.election.renew.duration";
  /**
   * Gauge in seconds: since the last successful Lease call. Prometheus:
   * {@code leader_election_last_success_age_seconds}.
   */
  public static final String LAST_SUCCESS_AGE = "leader.election.last.success.age";
  /** Gauge, always 1, whose tags say the decision. Prometheus: {@code leader_election_decision_info}. */
  public static final String DECISION = "leader.election.decision.info";

  /** Tag key of every meter: the Lease's name, as client-go's {@code name} label. */
  public static final String TAG_NAME = "name";
  /** Tag key of every meter: the Lease's namespace. */
  public static final String TAG_NAMESPACE = "namespace";
  /** Tag key of {@link #DECISION}: {@code CONTEND} or {@code RUN_UNELECTED}. */
  public static final String TAG_OUTCOME = "outcome";
  /** Tag key of {@link #DECISION}: the decision's reason codes, comma-separated, in the order of the enum. */
  public static final String TAG_REASONS = "reasons";

  private static final List<String> RESERVED_KEYS = List.of(TAG_NAME, TAG_NAMESPACE, TAG_OUTCOME, TAG_REASONS);

  private final Tags extraTags;
  private final Object lock = new Object();
  // Guarded by lock.
  private final Set<MeterRegistry> registries = Collections.newSetFromMap(new IdentityHashMap<>());
  private ElectionRunner.Builder listenedTo;
  // The listener added to listenedTo; a new one for another builder, so one left on a builder whose start
  // failed counts nothing for this binder if that builder is started some other way later.
  private EventCounts events;
  private boolean starting;
  private ElectionMeters meters;

  /** A binder whose meters carry the {@code name} and {@code namespace} tags only. */
  public ElectionMetrics() {
    this(Tags.empty());
  }

  /**
   * A binder whose meters carry {@code extraTags} besides their own, e.g. to tell two runners for one Lease
   * in one process apart.
   *
   * <pre>{@code
   * ElectionMetrics metrics = new ElectionMetrics(Tags.of("replica", "orders-1"));
   * }</pre>
   *
   * @param extraTags tags added to every meter
   * @throws IllegalArgumentException if a tag uses a key this binder sets itself ({@value #TAG_NAME},
   *     {@value #TAG_NAMESPACE}, {@value #TAG_OUTCOME}, {@value #TAG_REASONS})
   */
  public ElectionMetrics(Iterable<Tag> extraTags) {
    Tags tags = Tags.of(Objects.requireNonNull(extraTags, "extraTags"));
    List<String> clashing = tags.stream().map(Tag::getKey).filter(RESERVED_KEYS::contains)
        .collect(Collectors.toList());
    if (!clashing.isEmpty()) {
      throw new IllegalArgumentException("extraTags=" + tags.stream().map(t -> t.getKey() + "=" + t.getValue())
          .collect(Collectors.joining(",", "[", "]")) + " is not valid: the keys " + clashing
          + " are set by ElectionMetrics itself (" + String.join(", ", RESERVED_KEYS) + "); fix: use another key, "
          + "e.g. Tags.of(\"replica\", identity)");
    }
    this.extraTags = tags;
  }

  /**
   * Starts the runner that {@code builder} describes, measured by this binder: adds this binder's listener
   * to {@code builder}, calls {@link ElectionRunner.Builder#start()}, and registers the meters in every
   * registry bound so far. The only way to give this binder a runner, so the listener is always the one of
   * the runner it measures.
   *
   * <pre>{@code
   * ElectionRunner runner = metrics.start(ElectionRunner.builder()
   *     .client(client)
   *     .decision(decision)
   *     .settings(settings)
   *     .service(reconciler));
   * }</pre>
   *
   * <p>If {@code builder.start()} throws, the exception reaches the caller unchanged and this binder has no
   * runner; it may be called again, with another builder, or with the same one once its input is fixed if
   * the start failed on an input (a missing one, no valid namespace): the listener is not added twice. A
   * start that failed because a service's {@code start()} threw while running unelected did start a runner
   * (which stopped at once), so that builder refuses a second start: use a new one. If a bound registry refuses
   * one of the meters (Prometheus's, built with {@code throwExceptionOnRegistrationFailure()}, refuses a name another
   * meter registered with other tag keys; a meter filter may throw), this closes the runner it started (its services
   * stopped, its Lease released), waits until its listeners heard it stop (at most its {@link
   * ElectionRunner#stopTimeout()}, as a start whose service failed does: a listener that waits for this caller, such
   * as one that closes a Spring context from {@code STOPPED} while the context's refresh called this, holds it that
   * long) and throws what the registry threw: no meter of it stays in any registry, nor in the
   * children of a composite one, and nothing of it runs, even if a registry also throws when the meters are removed
   * (that is added to the thrown exception as suppressed).
   *
   * <p>One binder measures one runner at a time. Once that runner has stopped (closed, or on its own), this
   * method starts and measures the next one: its meters replace the stopped runner's in every registry this
   * binder is bound to, with counts from zero, as after a restart of the process. A lifecycle stopped and
   * started again (a Spring context's) may so reuse its binder.
   *
   * @param builder the runner's builder, not yet started
   * @return the started runner, as {@code builder.start()} returned it
   * @throws IllegalStateException if this binder measures a runner that has not stopped, or another thread
   *     is starting one through it
   * @throws RuntimeException what a bound registry threw when it refused a meter, after the runner was closed
   */
  public ElectionRunner start(ElectionRunner.Builder builder) {
    Objects.requireNonNull(builder, "builder");
    synchronized (lock) {
      if (starting || (meters != null && !meters.isStopped())) {
        throw new IllegalStateException("this ElectionMetrics already " + (meters == null ? "starts a runner"
            : "measures " + meters.describe() + ", which has not stopped") + ": one binder measures one "
            + "runner at a time; fix: create a new ElectionMetrics for the other runner (with an extra tag if "
            + "both share a Lease and a registry), or close the first runner before starting the next");
      }
      starting = true;
      if (listenedTo != builder) {
        events = new EventCounts(this::runnerStopped);
        builder.listener(events);
        listenedTo = builder;
      }
    }
    // Not under the lock: starting an unelected runner runs its services' start() on this thread.
    long startNanos = System.nanoTime();
    ElectionRunner runner;
    try {
      runner = builder.start();
    } catch (RuntimeException | Error e) {
      synchronized (lock) {
        starting = false;
      }
      throw e;
    }
    Throwable refused = null;
    synchronized (lock) {
      starting = false;
      if (meters != null) {
        // The runner this binder measured before has stopped: this one replaces it.
        meters.remove();
      }
      meters = new ElectionMeters(runner, extraTags, events, startNanos);
      listenedTo = null;
      try {
        for (MeterRegistry registry : registries) {
          meters.registerIn(registry);
        }
      } catch (RuntimeException | Error e) {
        refused = e;
        try {
          meters.remove();
        } catch (RuntimeException | Error second) {
          // A registry that throws on removal too: the runner is closed all the same, and the refusal is thrown.
          refused.addSuppressed(second);
        }
        meters = null;
      }
      if (refused == null && events.stopped()) {
        // Stopped before this thread got here (a preflight denial may be that quick): the event found no meters.
        meters.runnerStopped();
      }
    }
    if (refused != null) {
      // A registry refused a meter (Prometheus's refuses a name another meter has with other tag keys): the start
      // fails, and the runner it started is closed first, out of the lock (its listener's last event takes it),
      // and its listeners have heard it stop before the caller learns of the failure (a Spring context then
      // destroys the beans they use), as when a service fails to start.
      try {
        runner.close();
      } catch (RuntimeException | Error second) {
        refused.addSuppressed(second);
      }
      try {
        awaitListeners(runner);
      } catch (RuntimeException | Error second) {
        refused.addSuppressed(second);
      }
      if (refused instanceof Error error) {
        throw error;
      }
      throw (RuntimeException) refused;
    }
    return runner;
  }

  /**
   * Waits, at most the runner's {@link ElectionRunner#stopTimeout()} whatever interrupts come (the flag is set
   * again), until the listeners of the closed {@code runner} heard it stop.
   */
  private static void awaitListeners(ElectionRunner runner) {
    // In Durations, not nanoseconds: any positive stop timeout is valid (ChronoUnit.FOREVER's included, whose
    // nanoseconds overflow a long), and awaitStopped caps it (review h-metrics).
    Duration bound = runner.stopTimeout();
    long begun = System.nanoTime();
    boolean interrupted = false;
    while (true) {
      try {
        runner.awaitStopped(bound.minusNanos(System.nanoTime() - begun));
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** On the listener thread of the runner that {@code counts} listens to, once it reported STOPPED. */
  private void runnerStopped(EventCounts counts) {
    synchronized (lock) {
      // Only for the runner measured now: not one this binder measured before (replaced already), nor one
      // started some other way from a builder whose start through this binder failed.
      if (meters != null && meters.events() == counts) {
        meters.runnerStopped();
      }
    }
  }

  /**
   * Binds this binder to {@code registry}: registers the meters now if the runner has started, else when
   * it starts; nothing while its meters are removed (its runner was closed, or replaced after it stopped)
   * until this binder starts the next runner. Binding one registry again does nothing. A registry that refuses a
   * meter (Prometheus's, for a name another meter has with other tag keys) keeps none of them, and this binder is
   * then not bound to it: the refusal is thrown.
   *
   * @param registry the registry
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    synchronized (lock) {
      if (!registries.add(registry)) {
        return;
      }
      if (meters != null) {
        try {
          meters.registerIn(registry);
        } catch (RuntimeException | Error e) {
          // It keeps none of them (all or none): nor is this binder bound to it, so that binding it again once it
          // accepts them registers them, and the next start does not fail on it.
          registries.remove(registry);
          throw e;
        }
      }
    }
  }

  @Override
  public String toString() {
    synchronized (lock) {
      return "ElectionMetrics{" + (meters == null ? "not started" : meters.describe() + ", " + meters.status())
          + ", " + registries.size() + " registr" + (registries.size() == 1 ? "y" : "ies") + "}";
    }
  }
}
