package io.github.electionpolicy.springboot;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.fabric8.ElectionHealth;
import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.Readiness;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * The {@link ElectionRunner} of a Spring application, as a {@link SmartLifecycle}: {@link #start()} starts the
 * runner once every singleton exists, at the end of the context's refresh, with every
 * {@link LeaderService} bean of the context as its services (in {@link org.springframework.core.annotation.Order
 * order}); {@link #stop()} closes it when the context closes, before any bean is destroyed, so the services
 * stop first and the Lease is released while the {@link KubernetesClient} still works.
 *
 * <p><b>Phase.</b> {@link #DEFAULT_PHASE} unless {@code election.phase} sets another: above Spring Boot's web
 * server (its graceful shutdown runs in phase {@code Integer.MAX_VALUE - 1024}, its start and stop in
 * {@code Integer.MAX_VALUE - 2048}). So the runner starts once the web server answers probes, and on shutdown
 * it stops first: the leader-only work stops and the Lease is released, so another replica takes over at
 * once, and only then does the web server drain its requests. {@link #stop()} returns only once the runner is
 * closed and its listeners heard it stop, which takes at most {@code 2 × stopTimeout + 5 × requestTimeout + 1 s}.
 *
 * <p>Created by {@link ElectionAutoConfiguration}; inject it to read the state:
 *
 * <pre>{@code
 * @RestController
 * class LeaderEndpoint {
 *   private final ElectionLifecycle election;
 *
 *   LeaderEndpoint(ElectionLifecycle election) {
 *     this.election = election;
 *   }
 *
 *   @GetMapping("/leader")
 *   boolean runsLeaderOnlyWork() {   // leading, or running unelected
 *     return election.currentTerm().map(LeadershipTerm::isValid).orElse(false);
 *   }
 * }
 * }</pre>
 *
 * <p>Thread-safe: {@link #start()} and {@link #stop()} are serialised, and the accessors never wait for them.
 */
public final class ElectionLifecycle implements SmartLifecycle {

  /**
   * The default phase: {@code Integer.MAX_VALUE - 512}, above the web server's graceful shutdown
   * ({@code Integer.MAX_VALUE - 1024}), so the runner starts after the web server and stops before it.
   */
  public static final int DEFAULT_PHASE = SmartLifecycle.DEFAULT_PHASE - 512;

  private static final Logger LOG = LoggerFactory.getLogger(ElectionLifecycle.class);

  /** Stands in when the context defines no LeaderService: the runner then elects for its state and health. */
  private static final LeaderService NO_SERVICE = LeaderService.of(term -> { }, () -> { });

  private final ElectionDecision decision;
  private final LeaseSettings settings;
  private final Readiness readiness;
  private final boolean rbacPreflight;
  private final int phase;
  private final Inputs inputs;
  private final Object lock = new Object();
  // Written under lock; read without it by isRunning(), which never waits for a start (a service that reads it in its
  // start would otherwise wait for the start that waits for it). A stop sets stopping before it clears running.
  private volatile boolean running;
  // A stop() is closing the runner (running is false already): a start() waits for it. Written under lock.
  private volatile boolean stopping;
  // What waits for the stop in progress: the stop(Runnable) callbacks Spring gave it meanwhile. Guarded by lock.
  private final List<Runnable> afterStop = new ArrayList<>();
  // Written under lock; read without it, so health() never waits for a start or a stop in progress.
  private volatile ElectionRunner runner;
  // The client this lifecycle made because the context has none; closed with the runner. Guarded by lock.
  private KubernetesClient ownedClient;
  // The threads the runner's own services and listeners run on: a start() or stop() from one of them must not wait
  // for what waits for it.
  private final RunnerCallbackThreads callbackThreads = new RunnerCallbackThreads();
  private final RunnerStopWaits stopWaits;
  // A start() is starting the runner, under the lock; a stop() that one of that runner's services called meanwhile (it
  // cannot take the lock) asks it to close the runner once started.
  private volatile boolean startInProgress;
  private volatile boolean stopDuringStart;
  // The client of the last start, for the tests: which one the runner used.
  private volatile KubernetesClient lastClient;

  /** What a start needs from the context, looked up only when it starts: every bean exists by then. */
  interface Inputs {
    /** The {@code LeaderService} beans, in order. */
    List<LeaderService> services();

    /** The {@code ElectionListener} beans, in order. */
    List<ElectionListener> listeners();

    /** The {@code ElectionRunnerCustomizer} beans, in order. */
    List<ElectionRunnerCustomizer> customizers();

    /** How to start the runner: the application's {@code ElectionRunnerStarter}, else {@code Builder::start}. */
    ElectionRunnerStarter starter();

    /** The application's client, if it defines one; throws if it defines several and none is primary. */
    Optional<KubernetesClient> applicationClient();

    /** Makes the client this lifecycle owns when the application has none. */
    Supplier<KubernetesClient> clientFactory();
  }

  ElectionLifecycle(ElectionDecision decision, LeaseSettings settings, Readiness readiness, boolean rbacPreflight,
      int phase, Inputs inputs) {
    this.decision = Objects.requireNonNull(decision, "decision");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.stopWaits = new RunnerStopWaits(settings);
    this.readiness = Objects.requireNonNull(readiness, "readiness");
    this.rbacPreflight = rbacPreflight;
    this.phase = phase;
    this.inputs = Objects.requireNonNull(inputs, "inputs");
  }

  /**
   * Starts the runner: logs the decision, then runs the services at once when it is to run unelected, or
   * starts contending (returning at once, in state {@code STARTING}). Called while a {@link #stop()} closes the
   * runner, it first waits for that stop to return, and for the runner that stop closed to have stopped (a stop from
   * one of the runner's own callbacks returns before it stopped); called then from one of that runner's listeners, which the stop
   * waits for, it starts nothing and logs a WARN. A {@link #stop()} that one of the services calls from its {@code
   * start} while this starts them unelected returns at once, and the runner is closed once it started. Called by
   * Spring at the end of the context's refresh; a failure (a namespace that cannot be resolved, a service whose {@code start} throws
   * while unelected) fails the refresh with the library's message. Does nothing while running.
   *
   * @throws io.github.electionpolicy.InvalidElectionSettingException if no valid namespace can be found
   * @throws IllegalStateException if the runner cannot start, e.g. a service failed to start unelected
   */
  @Override
  public void start() {
    // Out of the lock: a runner that a stop from one of its own callbacks closed may still be stopping.
    stopWaits.awaitClosedRunnerStopped(runner);
    boolean stopAfterwards;
    synchronized (lock) {
      if (stopping && callbackThreads.isCurrentThread()) {
        // The stop waits for this callback to return, and a start waits for the stop: neither would go on until the
        // stop gave up on the callback after stopTimeout, and this start would then run a runner nobody stops.
        LOG.warn("start() was called from a service or listener of {} while a stop() closes it: nothing is started "
            + "(the stop waits for its callbacks); start the election again from a thread of your own", runner);
        return;
      }
      awaitStopInProgress();
      if (running) {
        return;
      }
      callbackThreads.forget();
      stopDuringStart = false;
      startInProgress = true;
      try {
        startRunner();
      } finally {
        startInProgress = false;
      }
      stopAfterwards = stopDuringStart;
    }
    if (stopAfterwards) {
      // A service's start called stop(), which could not wait for this start: the runner is closed now.
      stop();
    }
  }

  /** Under the lock: builds and starts the runner. */
  private void startRunner() {
    ElectionRunner.Builder builder = ElectionRunner.builder()
        .decision(decision)
        .settings(settings)
        .readiness(readiness)
        .rbacPreflight(rbacPreflight);
    List<LeaderService> services = inputs.services();
    if (services.isEmpty()) {
      LOG.info("No LeaderService bean in the context: the election runs for its state and health only");
      builder.service(NO_SERVICE);
    }
    services.forEach(service -> builder.service(callbackThreads.noted(service)));
    // First, so that it notes the thread before any other listener hears the event on it.
    builder.listener(callbackThreads.listener());
    inputs.listeners().forEach(builder::listener);
    KubernetesClient owned = null;
    KubernetesClient client = null;
    if (decision.contends()) {
      client = inputs.applicationClient().orElse(null);
      if (client == null) {
        owned = inputs.clientFactory().get();
        client = owned;
      }
      builder.client(client);
    }
    try {
      inputs.customizers().forEach(customizer -> customizer.customize(builder));
      ElectionRunner started = inputs.starter().start(builder);
      runner = Objects.requireNonNull(started, "the ElectionRunnerStarter returned no runner");
    } catch (RuntimeException | Error e) {
      if (owned != null) {
        owned.close();
      }
      throw e;
    }
    ownedClient = owned;
    lastClient = client;
    running = true;
  }

  /**
   * Closes the runner: ends the term, stops the services (waiting at most {@code stopTimeout}), releases the
   * Lease, waits until the {@link ElectionListener}s heard {@code STOPPED} (at most {@code stopTimeout} more),
   * and closes the client if this lifecycle made it. Returns once all of that is done. Called by Spring
   * when the context closes or stops; does nothing unless running. Called from one of the runner's own callbacks
   * (a listener or a service that closes the context), it cannot wait for the runner, which stops only once that
   * callback returned: it returns at once, logs a WARN, and closes the client it made once the runner stopped.
   */
  @Override
  public void stop() {
    stop(() -> { });
  }

  /**
   * As {@link #stop()}, then runs {@code callback}. Called while another {@code stop()} closes the runner (Spring
   * closing the context while a {@code context.stop()} is under way), it returns at once and {@code callback} runs
   * once that stop returned, so that Spring destroys no bean before the runner stopped; called when not running, it
   * runs {@code callback} at once. Called from a service or listener of the runner that another thread's stop closes,
   * it runs {@code callback} at once too (with a WARN): that stop waits for the service or listener to return. Either
   * way {@code callback} runs once, also when closing the runner or the client this lifecycle made throws (that failure
   * is thrown after it): Spring would otherwise wait for it until its shutdown phase timed out.
   *
   * @param callback what Spring runs once the lifecycle stopped
   */
  @Override
  public void stop(Runnable callback) {
    Objects.requireNonNull(callback, "callback");
    if (startInProgress && callbackThreads.isCurrentThread()) {
      // A service's start, which the start in progress waits for under the lock: that start closes the runner once
      // it has it.
      stopDuringStart = true;
      LOG.warn("stop() was called from a service of the runner that start() is starting: it is closed once the start "
          + "returned");
      callback.run();
      return;
    }
    ElectionRunner closing;
    KubernetesClient owned;
    ElectionRunner closedElsewhere = null;
    synchronized (lock) {
      if (!running && stopping) {
        if (!callbackThreads.isCurrentThread()) {
          afterStop.add(callback);
          return;
        }
        // From a service or listener of the runner that the stop in progress closes: that stop waits for this
        // callback, so Spring's callback cannot wait for that stop (Spring would wait until its timeout per shutdown
        // phase), as a stop from a callback cannot wait for the runner when no other stop is under way.
        closedElsewhere = runner;
      }
      closing = running ? runner : null;
      owned = running ? ownedClient : null;
      if (running) {
        stopping = true; // first: isRunning() reads running, then stopping, without the lock
        running = false;
        ownedClient = null;
      }
    }
    if (closedElsewhere != null) {
      LOG.warn("{} was stopped from one of its own callbacks while a stop() on another thread closes it: the context "
          + "goes on before it stopped and may destroy the beans its services and listeners use; close the context "
          + "from a thread of your own", closedElsewhere);
    }
    try {
      if (closing != null) {
        close(closing, owned);
      }
    } finally {
      // Spring waits for the callback until its shutdown phase times out, and only logs what stop throws.
      callback.run();
    }
  }

  /** Closes {@code closing}, which {@link #stop(Runnable)} took, then runs what waits for the stop. */
  private void close(ElectionRunner closing, KubernetesClient owned) {
    boolean deferred = false;
    try {
      closing.close();
      if (closing.state().kind() != ElectionState.Kind.STOPPED) {
        // close() returned without waiting, which it does only in one of the runner's own callbacks (a listener or a
        // service that closes the context): the runner stops once that callback returned, and still needs the client.
        LOG.warn("{} was stopped from one of its own callbacks: it stops after that callback returned, once the "
            + "context may have destroyed the beans its services and listeners use; close the context from a thread "
            + "of your own", closing);
        if (owned != null) {
          RunnerStopWaits.closeWhenStopped(closing, owned);
          deferred = true;
        }
      } else {
        stopWaits.awaitListeners(closing);
      }
    } finally {
      try {
        if (owned != null && !deferred) {
          owned.close();
        }
      } finally {
        List<Runnable> waiting;
        synchronized (lock) {
          stopping = false;
          waiting = List.copyOf(afterStop);
          afterStop.clear();
          lock.notifyAll();
        }
        waiting.forEach(Runnable::run);
      }
    }
  }

  /**
   * Under the lock: waits until no {@link #stop()} is closing the runner, so that a start never runs the services of
   * a second runner while the first one's services still stop (a stop is bounded, see the class comment). Interrupts do not
   * cut it short; the flag is set again.
   */
  private void awaitStopInProgress() {
    boolean interrupted = false;
    while (stopping) {
      try {
        lock.wait();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Whether the runner was started and not yet closed by {@link #stop()}: true until the stop returned, so that a
   * context that closes meanwhile waits for it (see {@link #stop(Runnable)}) before it destroys any bean. A runner
   * that stopped by itself (after a loss under a policy that does not contend again) still counts as running, so that
   * the context's close still closes it. Never waits for a {@link #start()} in progress: it is false until that start
   * returned.
   *
   * @return whether the runner was started and a {@link #stop()} has not returned since
   */
  @Override
  public boolean isRunning() {
    // Without the lock: never waits for a start or a stop in progress. running before stopping (see stop(Runnable)).
    return running || stopping;
  }

  /**
   * The phase, {@code election.phase}.
   *
   * @return {@link #DEFAULT_PHASE} unless set
   */
  @Override
  public int getPhase() {
    return phase;
  }

  /**
   * Always: the runner starts when the context has refreshed.
   *
   * @return true
   */
  @Override
  public boolean isAutoStartup() {
    return true;
  }

  /**
   * The decision the runner acts on, made when the context was created.
   *
   * @return the decision
   */
  public ElectionDecision decision() {
    return decision;
  }

  /**
   * The Lease settings, built from the {@code election.*} properties.
   *
   * @return the settings
   */
  public LeaseSettings settings() {
    return settings;
  }

  /**
   * The runner, once started; after a {@link #stop()} the closed one, until the next start.
   *
   * @return the runner; empty before the first start
   */
  public Optional<ElectionRunner> runner() {
    return Optional.ofNullable(runner);
  }

  /**
   * The runner's state.
   *
   * @return the current state; before the first start, {@code STARTING} when the decision is to contend, else
   *     {@code NOT_CONTENDING}
   */
  public ElectionState state() {
    ElectionRunner current = runner;
    return current != null ? current.state() : notStarted();
  }

  /**
   * The runner's health, which the health indicators report (see {@link ElectionHealth}).
   *
   * @return the current health; before the first start, not ready and live
   */
  public ElectionHealth health() {
    ElectionRunner current = runner;
    return current != null ? current.health() : new ElectionHealth(false, true, notStarted(), Optional.empty());
  }

  /**
   * The term the services run under, if they run.
   *
   * @return the current term while leading or running unelected, else empty
   */
  public Optional<LeadershipTerm> currentTerm() {
    ElectionRunner current = runner;
    return current != null ? current.currentTerm() : Optional.empty();
  }

  /** The client the last start gave the runner: the application's or this lifecycle's own; for tests. */
  Optional<KubernetesClient> lastClient() {
    return Optional.ofNullable(lastClient);
  }

  private ElectionState notStarted() {
    return decision.contends() ? new ElectionState.Starting()
        : new ElectionState.NotContending(settings.identity().orElse("unelected"));
  }

  @Override
  public String toString() {
    ElectionRunner current = runner;
    return "ElectionLifecycle{phase=" + phase + ", " + (current != null ? current : decision.outcome()) + "}";
  }
}
