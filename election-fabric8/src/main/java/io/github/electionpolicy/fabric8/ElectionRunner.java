package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.DecisionLog;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The entry point: acts on the core's {@link ElectionDecision}. When the decision is
 * {@link ElectionDecision.Outcome#RUN_UNELECTED RUN_UNELECTED} it starts the reconcilers at once and makes no
 * Kubernetes API call at all; when it is {@link ElectionDecision.Outcome#CONTEND CONTEND} it contends for a
 * {@code coordination.k8s.io/v1} Lease and runs the reconcilers only while it leads. Either way it logs the
 * decision first, through {@link DecisionLog}.
 *
 * <pre>{@code
 * public static void main(String[] args) throws InterruptedException {
 *   KubernetesClient client = new KubernetesClientBuilder().build();
 *   ElectionRunner runner = ElectionRunner.builder()
 *       .client(client)
 *       .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.usingKubernetesApi("kubernetes"))
 *       .settings(LeaseSettings.builder().leaseName("orders-controller").build())
 *       .service(new OrdersReconciler(client))
 *       .start();
 *   Runtime.getRuntime().addShutdownHook(new Thread(runner::close));
 *   runner.awaitStopped();
 * }
 * }</pre>
 *
 * <p>Every policy is explicit: on loss, {@link LeaseSettings#lossPolicy()}; on shutdown, {@link #close()}
 * stops the reconcilers (waiting at most {@link LeaseSettings#stopTimeout()}) and then releases the Lease
 * so another replica takes over at once; with the API server unreachable, the leader stops its reconcilers
 * within {@link LeaseSettings#renewDeadline()} and {@link #health()} turns not ready, then not live.
 *
 * <p>Start-up: {@link Builder#start()} throws for whatever it can check on the caller's thread (a missing
 * input, no valid namespace) and otherwise returns at once, in state {@link ElectionState.Starting STARTING},
 * without waiting for the API server. The RBAC preflight and the Lease calls run on the shared I/O pool. A
 * preflight that finds a missing verb stops the runner before it contends: it logs an ERROR naming the verbs
 * and the Role to apply, {@link #startupFailure()} returns the {@link LeaseAccessDeniedException}, the state
 * becomes {@code STOPPED} and {@link #awaitStopped()} returns; under the default loss policy
 * {@link LossPolicy#exit() EXIT} the process first exits with status 1, as after a loss.
 *
 * <p>Inside, one loop owns all of a runner's state ({@code election-loop}, one daemon thread shared by every
 * runner of the JVM); services, listeners, the loss handler and the exiter run on a shared pool of callback
 * threads (named {@code election-services[lease:identity]} and so on while they run a runner's code), services
 * one call at a time and never on the loop; Lease calls run on a shared I/O pool that keeps eight threads and
 * grows only while more calls than that hang at once.
 * A thousand runners in one JVM add a handful of threads, not thousands.
 *
 * <p>Thread-safe.
 */
public final class ElectionRunner implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);
  /** The identity of a runner that runs unelected without an explicit one. */
  private static final String UNELECTED = "unelected";

  private final ElectionDecision decision;
  private final String identity;
  // Where the identity came from, for the log; null when running unelected.
  private final ProcessIdentity.Source identitySource;
  private final LeaseSettings settings;
  private final Ticker ticker;
  private final LeadershipTerm unelectedTerm;
  private final String namespace;
  private final LifecycleDriver driver;
  private final HealthRule.Inputs healthInputs;

  private ElectionRunner(Builder b) {
    this.decision = b.decision;
    this.settings = b.settings;
    // Resolved here, at start, and only to contend: running unelected needs no identity but the one for logs.
    ProcessIdentity.Resolved resolved = b.decision.contends() ? ProcessIdentity.resolve(b.settings) : null;
    this.identity = resolved != null ? resolved.identity()
        : b.settings == null ? UNELECTED : b.settings.identity().orElse(UNELECTED);
    this.identitySource = resolved == null ? null : resolved.source();
    this.ticker = b.ticker;
    long startNanos = ticker.read();
    // Tells this runner's threads from another's in the same JVM: "leaseName:identity", or the identity.
    String threadTag = decision.contends() ? b.settings.leaseName() + ":" + identity : identity;
    Optional<LeaseTransport> transport;
    if (decision.contends()) {
      this.unelectedTerm = null;
      this.namespace = LeaseNamespace.resolve(settings, b.client == null ? null : b.client.getNamespace()).name();
      transport = Optional.of(b.transport != null ? b.transport
          : new Fabric8LeaseTransport(b.client, namespace, settings, SharedPools.io()));
    } else {
      this.unelectedTerm = LeadershipTerm.unelected(identity, b.clock.instant(), ticker);
      this.namespace = null;
      transport = Optional.empty();
    }
    String lease = namespace == null ? identity : namespace + "/" + settings.leaseName();
    this.driver = new LifecycleDriver(new LifecycleDriver.Parts(identity, lease, settings,
        Optional.ofNullable(unelectedTerm), b.reconcilers, b.listeners, b.loop, b.userCode, transport,
        b.rbacPreflight, ticker, b.clock, threadTag, b.flaw, b.runnerFlaw, b.logs));
    this.healthInputs = new HealthRule.Inputs(decision.contends(), b.readiness,
        settings == null ? 0 : settings.healthBudget().toNanos(), startNanos);
  }

  /**
   * Starts a builder.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  private void begin() {
    if (!decision.contends()) {
      LOG.info("Starting services unelected as {}", identity);
      Optional<Throwable> failure = awaitUninterruptibly(driver.start());
      if (failure.isPresent()) {
        Throwable cause = failure.get();
        throw new IllegalStateException("a service failed to start: " + cause.getMessage(), cause);
      }
      return;
    }
    LOG.info("Contending for Lease {}/{} as {} ({}; lease {}, renew deadline {}, retry {}, on loss {})",
        namespace, settings.leaseName(), identity, identitySource, Durations.format(settings.leaseDuration()),
        Durations.format(settings.renewDeadline()), Durations.format(settings.retryPeriod()),
        settings.lossPolicy());
    Duration margin = SettingsChecks.safetyMargin(settings.leaseDuration(), settings.renewDeadline());
    if (settings.lossPolicy().kind() == LossPolicy.Kind.EXIT && settings.stopTimeout().compareTo(margin) > 0) {
      LOG.warn("stopTimeout={} is longer than leaseDuration - renewDeadline = {}: after a loss, services that "
          + "take that long to stop may still run when another replica takes over; lower stopTimeout, or "
          + "raise leaseDuration, and fence writes with the LeadershipTerm", Durations.format(settings.stopTimeout()),
          Durations.format(margin));
    }
    driver.start();
  }

  /** Waits for an unelected start; interrupts do not cut it short (no runner would be returned to stop it). */
  private Optional<Throwable> awaitUninterruptibly(java.util.concurrent.CompletableFuture<Optional<Throwable>> f) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return f.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (java.util.concurrent.ExecutionException e) {
          return Optional.of(e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The decision this runner acts on.
   *
   * @return the decision
   */
  public ElectionDecision decision() {
    return decision;
  }

  /**
   * The identity of this process, written as holder when it leads; resolved when the runner started (see
   * {@link LeaseSettings#identity()} for the order) and logged then.
   *
   * @return the identity; running unelected, the explicit {@link LeaseSettings#identity()} if any, else
   *     {@code "unelected"}
   */
  public String identity() {
    return identity;
  }

  /**
   * Why the runner stopped before contending, if it did: the RBAC preflight, run after {@link Builder#start()}
   * returned, found that this process may not use the Lease. The runner then
   * logged an ERROR with the same message (the missing verbs and the Role to apply), contended for nothing,
   * started no reconciler, applied the loss policy ({@code EXIT} exits with status 1; any other policy just
   * stops) and reached {@code STOPPED}. Check it once {@link #awaitStopped()} returns to fail loudly under a
   * policy that does not exit:
   *
   * <pre>{@code
   * runner.awaitStopped();
   * runner.startupFailure().ifPresent(denied -> {
   *   System.err.println(denied.getMessage());   // the missing verbs and the Role to apply
   *   System.exit(2);
   * });
   * }</pre>
   *
   * <p>The same as the {@link ElectionState.Stopped#failure() failure} of a state {@code STOPPED} with cause
   * {@link ElectionState.StopCause#ACCESS_DENIED ACCESS_DENIED}.
   *
   * @return the denial that stopped the runner; empty while starting or running, after a close, and after
   *     any stop for another cause
   */
  public Optional<LeaseAccessDeniedException> startupFailure() {
    return state() instanceof ElectionState.Stopped stopped
        && stopped.cause() == ElectionState.StopCause.ACCESS_DENIED
        ? stopped.failure().map(LeaseAccessDeniedException.class::cast) : Optional.empty();
  }

  /**
   * The namespace of the Lease.
   *
   * @return the resolved namespace; empty when running unelected
   */
  public Optional<String> namespace() {
    return Optional.ofNullable(namespace);
  }

  /**
   * The name of the Lease, from {@link LeaseSettings#leaseName()}; with {@link #namespace()} it names the
   * Lease in logs and metrics.
   *
   * @return the Lease's name; running unelected, the name the settings give if any were given (no Lease is
   *     used then), else empty
   */
  public Optional<String> leaseName() {
    return Optional.ofNullable(settings).map(LeaseSettings::leaseName);
  }

  /**
   * Where the runner stands now.
   *
   * @return the current state
   */
  public ElectionState state() {
    return driver.view().state();
  }

  /**
   * The term the services run under, if they run.
   *
   * @return the current term while leading (or running unelected), else empty
   */
  public Optional<LeadershipTerm> currentTerm() {
    ElectionState state = state();
    if (state instanceof ElectionState.Leading leading) {
      return Optional.of(leading.term());
    }
    return state instanceof ElectionState.NotContending ? Optional.of(unelectedTerm) : Optional.empty();
  }

  /**
   * A health snapshot for probes; see {@link ElectionHealth} for the rules. Meaningful from the moment
   * {@link Builder#start()} returns: while {@code STARTING}, not ready and live (within the health budget).
   *
   * @return the snapshot
   */
  public ElectionHealth health() {
    RunnerView view = driver.view();
    boolean termValid = view.state() instanceof ElectionState.Leading leading && leading.term().isValid();
    return HealthRule.evaluate(healthInputs, view, ticker.read(), termValid, driver.closeRequested());
  }

  /**
   * Readiness, as in {@link #health()}, under the {@link Readiness} mode the builder set.
   *
   * @return whether the process should receive traffic
   */
  public boolean isReady() {
    return health().ready();
  }

  /**
   * Liveness, as in {@link #health()}.
   *
   * @return whether the process is healthy enough not to be restarted
   */
  public boolean isLive() {
    return health().live();
  }

  /**
   * Waits until the runner has stopped (closed, or stopped on its own: see {@link ElectionState.StopCause}) and
   * every callback queued before (the listeners hearing {@code STOPPED}) has run, and the log lines until then
   * are written (an appender that is stuck is waited for at most {@link LeaseSettings#stopTimeout()}). Called from one of the
   * runner's own callbacks (a service, listener, loss handler or exiter) it returns at once (the timed form
   * then returns whether the runner already stopped): the runner may stop only once that callback has
   * returned. The one callback it never waits for is a service's {@code stop()} that outlived
   * {@link LeaseSettings#stopTimeout()}: the runner cannot end a stop that does not return (health is then not
   * live).
   *
   * @throws InterruptedException if interrupted while waiting
   */
  public void awaitStopped() throws InterruptedException {
    if (driver.inCallback()) {
      return;
    }
    driver.awaitStoppedReported(Long.MAX_VALUE);
    driver.awaitCallbacks(0, true);
  }

  /**
   * Waits at most {@code timeout} until the runner has stopped and its callbacks have run, as in
   * {@link #awaitStopped()}.
   *
   * @param timeout the longest wait
   * @return true if stopped, false if the wait timed out
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean awaitStopped(Duration timeout) throws InterruptedException {
    if (driver.inCallback()) {
      return driver.hasStopped();
    }
    long wait = Durations.cappedNanos(timeout);
    long deadline = System.nanoTime() + wait;
    return driver.awaitStoppedReported(wait) && driver.awaitCallbacks(deadline, false);
  }

  /**
   * Whether {@link #close()} has been called: true from the moment it begins, while it may still be stopping
   * ({@link #awaitStopped()} waits for the end). A runner in state {@code STOPPED} that is not closed stopped
   * on its own: the RBAC preflight denied it ({@link #startupFailure()}), its loss policy stopped it, or its
   * election loop failed. A listener that hears {@code STOPPED} can tell the two apart, since {@code close()}
   * marks the runner closed before it reports {@code STOPPED}; a runner that had stopped on its own and is
   * closed afterwards reports no further event.
   *
   * <pre>{@code
   * if (runner.state().kind() == ElectionState.Kind.STOPPED && !runner.isClosed()) {
   *   log.error("the runner stopped on its own; exiting so that the pod restarts");
   *   System.exit(1);
   * }
   * }</pre>
   *
   * @return true once {@code close()} has been called
   */
  public boolean isClosed() {
    return driver.closeRequested();
  }

  /**
   * Stops the services first, waiting at most {@link LeaseSettings#stopTimeout()}, then releases the
   * Lease by writing an empty holder with {@code leaseDurationSeconds = 1}, so a follower takes over at
   * once. If a service did not stop in time, or its {@code stop()} threw, the Lease is not released but
   * left to expire (and an ERROR is logged), so another replica takes over only after one lease duration.
   * Idempotent; never triggers the loss policy, not even when a stop failed: closing is not a loss, and an
   * {@code EXIT} from a shutdown hook would deadlock. Safe to call from a shutdown hook, a listener, a loss
   * handler, an exiter or a service callback. Returns once the runner reports {@code STOPPED} and its log lines
   * until then are written (the runner writes them off its loop; an appender that is stuck is waited for at
   * most the stop timeout).
   *
   * <p>An interrupt does not cut it short: called on a thread whose interrupt flag is set (as shutdown hooks
   * and executors may), it still waits for the services and the release, and sets the flag again before
   * it returns, as it does when an interrupt arrives while it waits.
   *
   * <p>Called while {@code STARTING}, there is nothing to stop or release: the RBAC preflight is cut short and
   * the runner stops at once. Called while a loss is handled, it ends contention: the runner stops once the
   * services have stopped, and a loss handler's answer no longer counts. Called while the exiter runs (a
   * shutdown hook during {@code System.exit}), it stops the runner at once.
   *
   * <p>Called from one of the runner's own callbacks (a service's {@code start} or {@code stop}, a listener, the
   * loss handler or the exiter), it ends the term at once (so no service after the caller starts), returns
   * without waiting, and the runner finishes once that callback has returned: the services stop, and only then
   * is the Lease released. Use {@link #awaitStopped()} from another thread to wait for the end.
   */
  @Override
  public void close() {
    driver.requestClose();
    if (driver.inCallback()) {
      return;
    }
    // Waits whatever interrupts come, and keeps them for the caller.
    boolean interrupted = false;
    while (true) {
      try {
        driver.awaitStoppedReported(Long.MAX_VALUE);
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    while (true) {
      try {
        driver.awaitLogWritten(Long.MAX_VALUE);
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "ElectionRunner{" + identity + ", " + state() + "}";
  }

  /**
   * Test hook: ends this runner the way a killed process ends, as far as other replicas can tell. The Lease
   * loop stops without another write (no release, no renewal), no service is stopped and no listener or
   * loss policy runs; the Lease is left to expire. (A real crash also ends the services' work; a test's
   * services have no work of their own, and the test records the crash as the instant their work ended.)
   */
  void crashForTest() {
    driver.onLoopAndWait(driver::crash);
  }

  /**
   * Asks the runner to close without waiting: the simulation's single thread is the loop, and cannot wait for
   * it.
   */
  void closeAsync() {
    driver.requestClose();
  }

  /**
   * Builds and starts an {@link ElectionRunner}. Not thread-safe: use one builder from one thread.
   *
   * <pre>{@code
   * ElectionRunner runner = ElectionRunner.builder()
   *     .client(client)
   *     .decision(decision)
   *     .settings(settings)
   *     .service(LeaderService.of(term -> informers.start(), informers::stop))
   *     .listener(metricsListener)
   *     .start();
   * }</pre>
   */
  public static final class Builder {
    private KubernetesClient client;
    private ElectionDecision decision;
    private LeaseSettings settings;
    private final List<LeaderService> reconcilers = new ArrayList<>();
    private final List<ElectionListener> listeners = new ArrayList<>();
    private boolean rbacPreflight = true;
    private Readiness readiness = Readiness.CONNECTED;
    private boolean started;
    private Ticker ticker = Ticker.system();
    private Clock clock = Clock.systemUTC();
    private RunnerLoop loop = RunnerLoop.shared();
    private java.util.concurrent.Executor userCode = SharedPools.userCode();
    private java.util.concurrent.Executor logs = SharedPools.userCode();
    private LeaseTransport transport;
    private LeaseProtocol.Flaw flaw = LeaseProtocol.Flaw.NONE;
    private RunnerFlaw runnerFlaw = RunnerFlaw.NONE;

    private Builder() {}

    /**
     * Sets the client used for Lease calls. Required when the decision is to contend; never called when
     * running unelected. Its own timeout and retry settings do not apply to Lease calls.
     *
     * @param client the client
     * @return this builder
     */
    public Builder client(KubernetesClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * Sets the decision to act on. Required (or {@link #decide(ElectionPolicy, Environment, Substrate)}).
     *
     * @param decision the core's decision
     * @return this builder
     */
    public Builder decision(ElectionDecision decision) {
      this.decision = Objects.requireNonNull(decision, "decision");
      return this;
    }

    /**
     * Computes the decision to act on from a policy, an environment and a substrate.
     *
     * @param policy the policy, e.g. {@link ElectionPolicy#defaults()}
     * @param environment the environment, e.g. {@link Environment#system()}
     * @param substrate what the controller works on
     * @return this builder
     */
    public Builder decide(ElectionPolicy policy, Environment environment, Substrate substrate) {
      return decision(Objects.requireNonNull(policy, "policy").decide(environment, substrate));
    }

    /**
     * Sets the Lease settings. Required when the decision is to contend; when running unelected only the
     * identity (for logs) and the stop timeout are used, and without settings the stop timeout is 10 s.
     *
     * @param settings the settings
     * @return this builder
     */
    public Builder settings(LeaseSettings settings) {
      this.settings = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /**
     * Adds a service; services start in the order added and stop in reverse order.
     *
     * @param service the work to run while leading
     * @return this builder
     */
    public Builder service(LeaderService service) {
      reconcilers.add(Objects.requireNonNull(service, "service"));
      return this;
    }

    /**
     * Adds a listener.
     *
     * @param listener the listener
     * @return this builder
     */
    public Builder listener(ElectionListener listener) {
      listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    /**
     * Sets which contending replicas {@link ElectionRunner#health()} calls ready: {@link Readiness#CONNECTED}
     * (the default: leader and followers alike, while in touch with the API server) or
     * {@link Readiness#LEADER_ONLY} (the leader only, for a Service that must route to it). A runner that
     * runs unelected is ready once started in both modes.
     *
     * @param readiness the readiness mode
     * @return this builder
     */
    public Builder readiness(Readiness readiness) {
      this.readiness = Objects.requireNonNull(readiness, "readiness");
      return this;
    }

    /**
     * Turns the RBAC preflight on (the default) or off. It runs after {@code start()} returned, before the first
     * Lease call; a denial stops the runner, see {@link ElectionRunner#startupFailure()}.
     *
     * @param enabled whether to check with SelfSubjectAccessReviews before contending
     * @return this builder
     */
    public Builder rbacPreflight(boolean enabled) {
      this.rbacPreflight = enabled;
      return this;
    }

    Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The loop that owns the runner's state; the simulation's instead of the shared one. */
    Builder loop(RunnerLoop loop) {
      this.loop = Objects.requireNonNull(loop, "loop");
      return this;
    }

    /** Where user code runs; the simulation's instead of the shared pool. */
    Builder userCode(java.util.concurrent.Executor userCode) {
      this.userCode = Objects.requireNonNull(userCode, "userCode");
      return this;
    }

    /** Where the log lines logged on the loop are written; the simulation writes them inline. */
    Builder logs(java.util.concurrent.Executor logs) {
      this.logs = Objects.requireNonNull(logs, "logs");
      return this;
    }

    /** A deliberate defect of the protocol, for the simulation's broken variants. */
    Builder flaw(LeaseProtocol.Flaw flaw) {
      this.flaw = Objects.requireNonNull(flaw, "flaw");
      return this;
    }

    /** A deliberate defect of the runner, for the simulation's broken variants. */
    Builder runnerFlaw(RunnerFlaw flaw) {
      this.runnerFlaw = Objects.requireNonNull(flaw, "flaw");
      return this;
    }

    /** The Lease calls; the simulation's API server instead of fabric8 (then no client is needed). */
    Builder transport(LeaseTransport transport) {
      this.transport = Objects.requireNonNull(transport, "transport");
      return this;
    }

    /**
     * Logs the decision and starts: the reconcilers at once when unelected (this call returns once they
     * started), or the election on the shared loop, which runs the RBAC preflight and then contends for the Lease.
     *
     * <p>When contending it returns promptly, in state {@link ElectionState.Starting STARTING}: it makes no
     * API call on the caller's thread, so it never waits for the API server, even an unreachable one (the
     * tests bound it by one {@link LeaseSettings#requestTimeout()}; it takes milliseconds). Everything that can
     * be checked without the server throws from here; what the server must answer is reported later: a
     * preflight that finds a missing verb stops the runner (an ERROR log, {@link
     * ElectionRunner#startupFailure()}, state {@code STOPPED}, and an exit under the {@code EXIT} loss policy).
     *
     * <p>A start that throws because of this builder's inputs (a missing one, no valid namespace) started
     * nothing: fix the input and call {@code start()} again on the same builder. One that throws because a
     * service's {@code start()} failed (running unelected, the services start here) did start a runner, which
     * stopped at once: this builder then counts as started, so a retry needs a new builder.
     *
     * @return the running runner; close it to stop
     * @throws IllegalStateException if a required input is missing, if a service failed to start while running
     *     unelected (its failure is the cause), or if this builder already started a runner
     * @throws io.github.electionpolicy.InvalidElectionSettingException if no namespace can be found, or the one
     *     found (service-account file or client) is not a valid namespace name
     */
    public ElectionRunner start() {
      if (started) {
        throw new IllegalStateException("this builder already started a runner: two runners from one "
            + "builder would contend under the same identity; use a new builder");
      }
      if (decision == null) {
        throw new IllegalStateException("no decision: call decision(...) or decide(policy, environment, "
            + "substrate)");
      }
      if (reconcilers.isEmpty()) {
        throw new IllegalStateException("no service: add the work to run while leading with service(...)");
      }
      if (decision.contends() && settings == null) {
        throw new IllegalStateException("the decision is to contend but no settings were given: call "
            + "settings(LeaseSettings.builder().leaseName(...).build())");
      }
      if (decision.contends() && client == null && transport == null) {
        throw new IllegalStateException("the decision is to contend but no client was given: call "
            + "client(kubernetesClient)");
      }
      DecisionLog.log(decision);
      ElectionRunner runner = new ElectionRunner(this);
      // Only once a runner exists: a start that failed on, say, a bad namespace may be retried.
      started = true;
      runner.begin();
      return runner;
    }
  }
}
