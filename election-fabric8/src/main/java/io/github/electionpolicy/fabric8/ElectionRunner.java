package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * The entry point: acts on the core's {@link ElectionDecision}. When the decision is
 * {@link ElectionDecision.Outcome#RUN_UNELECTED RUN_UNELECTED} it starts the reconcilers at once and makes no
 * Kubernetes API call at all; when it is {@link ElectionDecision.Outcome#CONTEND CONTEND} it contends for a
 * {@code coordination.k8s.io/v1} Lease and runs the reconcilers only while it leads. Either way it logs the
 * decision first, through {@link io.github.electionpolicy.DecisionLog}.
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
 * <p>Start-up: {@link Builder#start()} throws for what it can check on the caller's thread and otherwise returns
 * at once, in state {@link ElectionState.Starting STARTING}; a RBAC preflight that finds a missing verb then stops
 * the runner before it contends ({@link #startupFailure()}; under {@link LossPolicy#exit() EXIT}, after an exit
 * with status 1).
 *
 * <p>A runner has no thread of its own: every runner of the JVM shares one loop thread ({@code election-loop}), a
 * pool for user code and log lines and a small I/O pool (see the {@linkplain io.github.electionpolicy.fabric8
 * package documentation}). Thread-safe.
 */
public final class ElectionRunner implements AutoCloseable {

  private final RunnerAssembly.Parts parts;
  private final LifecycleDriver driver;

  private ElectionRunner(RunnerAssembly.Parts parts) {
    this.parts = parts;
    this.driver = parts.driver();
  }

  /**
   * Starts a builder.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The decision this runner acts on.
   *
   * @return the decision
   */
  public ElectionDecision decision() {
    return parts.decision();
  }

  /**
   * The identity of this process, written as holder when it leads; resolved at start (see
   * {@link LeaseSettings#identity()}).
   *
   * @return the identity; running unelected, the explicit {@link LeaseSettings#identity()} if any, else
   *     {@code "unelected"}
   */
  public String identity() {
    return parts.identity();
  }

  /**
   * Why the runner stopped before contending, if it did: the RBAC preflight found that this process may not
   * use the Lease. The runner then logged an ERROR with the same message (the missing verbs and the Role to
   * apply), started no service, applied the loss policy ({@code EXIT} exits with status 1; any other just stops)
   * and reached {@code STOPPED}. Check it once {@link #awaitStopped()} returns, under a policy that does not exit:
   *
   * <pre>{@code
   * runner.awaitStopped();
   * runner.startupFailure().ifPresent(denied -> System.exit(2));   // its message was logged
   * }</pre>
   *
   * @return the denial that stopped the runner (the {@link ElectionState.Stopped#failure() failure} of a
   *     {@code STOPPED} with cause {@link ElectionState.StopCause#ACCESS_DENIED ACCESS_DENIED}); else empty
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
    return Optional.ofNullable(parts.namespace());
  }

  /**
   * The name of the Lease, from {@link LeaseSettings#leaseName()}; with {@link #namespace()} it names the
   * Lease in logs and metrics.
   *
   * @return the Lease's name; running unelected, the settings' name if settings were given, else empty
   */
  public Optional<String> leaseName() {
    return Optional.ofNullable(parts.settings()).map(LeaseSettings::leaseName);
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
    return state instanceof ElectionState.Leading leading ? Optional.of(leading.term())
        : state instanceof ElectionState.NotContending ? Optional.of(parts.unelectedTerm()) : Optional.empty();
  }

  /**
   * How long a stop waits for the services' {@code stop()}: also the bound to give a wait for the listeners after it.
   *
   * @return {@link LeaseSettings#stopTimeout()}; running unelected without settings, 10 s
   */
  public Duration stopTimeout() {
    return RunnerAssembly.stopTimeout(parts);
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
    return HealthRule.evaluate(parts.healthInputs(), view, parts.ticker().read(), termValid, driver.closeRequested());
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
   * Waits until the runner has stopped (closed, or on its own: see {@link ElectionState.StopCause}), every
   * callback queued before has run (the listeners heard {@code STOPPED}) and the log lines until then are written
   * (a stuck appender is waited for at most {@link LeaseSettings#stopTimeout()}). From one of the runner's own
   * callbacks it returns at once: the runner stops only once that callback returned. It never waits for a
   * service's {@code stop()} that outlived the stop timeout, which no library can end (health is then not live).
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
   * Waits at most {@code timeout} until the runner has stopped and its callbacks ran, as {@link #awaitStopped()}.
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
   * Whether {@link #close()} has been called: true from the moment it begins (before {@code STOPPED} is
   * reported, so a listener can tell a close from a stop on its own: a denial, the loss policy, a failed
   * election): {@code STOPPED && !isClosed()} is a runner that stopped on its own, whose process should exit so
   * that the pod restarts. A runner that stopped on its own and is closed afterwards reports no further event.
   *
   * @return true once {@code close()} has been called
   */
  public boolean isClosed() {
    return driver.closeRequested();
  }

  /**
   * Stops the services, waiting at most {@link LeaseSettings#stopTimeout()}, then releases the Lease (an empty
   * holder, {@code leaseDurationSeconds = 1}) so a follower takes over at once. If a service did not stop in time
   * or its {@code stop()} threw, the Lease is left to expire (and an ERROR is logged). Idempotent; never triggers
   * the loss policy: closing is not a loss, and an {@code EXIT} from a shutdown hook would deadlock. Returns once
   * the runner reports {@code STOPPED} and its log lines until then are written (a stuck appender is waited for
   * at most the stop timeout). An interrupt does not cut it short: it waits on, and sets the flag again.
   *
   * <p>While {@code STARTING}, the RBAC preflight is cut short and the runner stops at once; while a loss is
   * handled, the runner stops once the services stopped (the handler's answer no longer counts); while the
   * exiter runs (a shutdown hook during {@code System.exit}), it stops at once. From one of the runner's own
   * callbacks (a service, a listener, the loss handler, the exiter) it ends the term at once, so no later service
   * starts, and returns without waiting: the services stop once that callback returned, and only then is the
   * Lease released ({@link #awaitStopped()} from another thread waits for the end).
   */
  @Override
  public void close() {
    driver.requestClose();
    if (!driver.inCallback()) {
      driver.awaitClosedUninterruptibly();
    }
  }

  @Override
  public String toString() {
    return "ElectionRunner{" + parts.identity() + ", " + state() + "}";
  }

  LifecycleDriver driverForTest() { return driver; } // test hook (RunnerHooks): the driver that owns the state

  /**
   * Builds and starts an {@link ElectionRunner} (see its example). Setters reject null at once; {@link #start()}
   * checks what is missing. Not thread-safe: use one builder from one thread.
   */
  public static final class Builder {
    private final RunnerAssembly inputs = new RunnerAssembly();

    private Builder() {}

    /**
     * Sets the client used for Lease calls. Required when the decision is to contend; never called when
     * running unelected. Its own timeout and retry settings do not apply to Lease calls.
     *
     * @param client the client
     * @return this builder
     */
    public Builder client(KubernetesClient client) {
      inputs.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * Sets the decision to act on. Required (or {@link #decide(ElectionPolicy, Environment, Substrate)}).
     *
     * @param decision the core's decision
     * @return this builder
     */
    public Builder decision(ElectionDecision decision) {
      inputs.decision = Objects.requireNonNull(decision, "decision");
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
      inputs.settings = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /**
     * Adds a service; services start in the order added and stop in reverse order.
     *
     * @param service the work to run while leading
     * @return this builder
     */
    public Builder service(LeaderService service) {
      inputs.services.add(Objects.requireNonNull(service, "service"));
      return this;
    }

    /**
     * Adds a listener.
     *
     * @param listener the listener
     * @return this builder
     */
    public Builder listener(ElectionListener listener) {
      inputs.listeners.add(Objects.requireNonNull(listener, "listener"));
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
      inputs.readiness = Objects.requireNonNull(readiness, "readiness");
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
      inputs.rbacPreflight = enabled;
      return this;
    }

    // Package-private seams: the simulation's loop, executor, clocks and Lease calls; its variants' defects.
    Builder ticker(Ticker ticker) { inputs.ticker = Objects.requireNonNull(ticker, "ticker"); return this; }
    Builder clock(Clock clock) { inputs.clock = Objects.requireNonNull(clock, "clock"); return this; }
    Builder loop(RunnerLoop loop) { inputs.loop = Objects.requireNonNull(loop, "loop"); return this; }
    Builder userCode(Executor userCode) { inputs.userCode = Objects.requireNonNull(userCode, "userCode"); return this; }
    Builder transport(LeaseTransport t) { inputs.transport = Objects.requireNonNull(t, "transport"); return this; }
    Builder flaw(LeaseProtocol.Flaw flaw) { inputs.flaw = Objects.requireNonNull(flaw, "flaw"); return this; }
    Builder runnerFlaw(RunnerFlaw flaw) { inputs.runnerFlaw = Objects.requireNonNull(flaw, "flaw"); return this; }

    /**
     * Logs the decision and starts: the services at once when unelected (this call returns once they started),
     * or the election on the shared loop (the RBAC preflight, then the Lease). Contending, it returns promptly, in
     * state {@link ElectionState.Starting STARTING}: it makes no API call on the caller's thread, so it never
     * waits for the API server. What can be checked without the server throws from here; a preflight that finds a
     * missing verb stops the runner later ({@link ElectionRunner#startupFailure()}).
     *
     * <p>A start that throws because of this builder's inputs started nothing: fix the input and call it again. One
     * that throws because a service's {@code start()} failed (unelected) did start a runner, which stopped at
     * once: it throws once that runner reported {@code STOPPED} and its listeners heard it (a listener is waited for
     * at most {@link LeaseSettings#stopTimeout()}), and the builder then counts as started, so a retry needs a new
     * builder.
     *
     * @return the running runner; close it to stop
     * @throws IllegalStateException if a required input is missing, if a service failed to start while running
     *     unelected (its failure is the cause), or if this builder already started a runner
     * @throws io.github.electionpolicy.InvalidElectionSettingException if no namespace can be found, or the one
     *     found (service-account file or client) is not a valid namespace name
     */
    public ElectionRunner start() {
      RunnerAssembly.Parts parts = inputs.assembleOnce();
      RunnerAssembly.begin(parts);
      return new ElectionRunner(parts);
    }
  }
}
