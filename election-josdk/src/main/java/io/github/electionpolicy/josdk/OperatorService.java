package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.fabric8.WriteGate;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Java Operator SDK {@link Operator} as a {@link LeaderService}: an {@link ElectionRunner} starts it only while
 * this replica leads (or at once when the decision is to run unelected), and stops it, in-flight reconciliations
 * included, before the Lease can be taken by another replica. JOSDK's own leader election stays off.
 *
 * <pre>{@code
 * KubernetesClient client = new KubernetesClientBuilder().build();
 * OperatorService widgets = OperatorService.builder()
 *     .client(client)
 *     .reconcilers((operator, term) -> operator.register(new WidgetReconciler(term)))
 *     .build();                                      // fails if JOSDK's own leader election is configured
 * ElectionRunner runner = ElectionRunner.builder()
 *     .client(client)
 *     .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.usingKubernetesApi("kubernetes"))
 *     .settings(LeaseSettings.builder().leaseName("widget-operator").build())
 *     .service(widgets)                              // the operator runs only while this replica leads
 *     .start();
 * Runtime.getRuntime().addShutdownHook(new Thread(runner::close));
 * runner.awaitStopped();
 * }</pre>
 *
 * <p><b>One {@code Operator} per term.</b> Each {@link #start(LeadershipTerm)} builds a new {@code Operator} from
 * the {@linkplain Builder#configuration(Consumer) configuration}, lets the {@linkplain
 * Builder#reconcilers(ReconcilerRegistration) registration} register the term's reconcilers, and starts it;
 * {@link #stop()} stops it for good. An {@code Operator} is never restarted in place: it keeps the client it was
 * built with, so it could not take the next term's write gate, and whatever JOSDK or the reconcilers keep in memory
 * would cross into the next term. That is why the {@linkplain LossPolicy#exit() default loss policy}, {@code EXIT},
 * suits an operator (a new pod starts from a clean slate), and why {@link LossPolicy#recontend()} is safe here too:
 * the next term runs a new {@code Operator}, started only after the previous one's {@code stop()} returned.
 *
 * <p><b>What the operator writes with.</b> The {@code Operator} runs on {@link WriteGate#gate(KubernetesClient,
 * LeadershipTerm)} of the {@linkplain Builder#client(KubernetesClient) client}: reads pass, and every write
 * ({@code POST}, {@code PUT}, {@code PATCH}, {@code DELETE}) is refused with a
 * {@link io.github.electionpolicy.fabric8.TermEndedException} once the term has ended, so a reconciliation still
 * running after a loss cannot write. A client set with {@code withKubernetesClient} in the configuration is
 * replaced by it, and {@code withCloseClientOnStop} is set to {@code false}: the service closes the term's gated
 * client itself once the term's reconciliations have ended (never the client you gave it). The gated client makes
 * no automatic retries: a failed write fails the reconciliation, which JOSDK retries under its own retry policy.
 * And no reconciliation begins once the term has ended: the operator's reconciliation executor runs a task only
 * while the term is valid, even before the runner has stopped the operator.
 *
 * <p><b>Stopping.</b> {@link #stop()} calls {@code Operator.stop()} and then waits until no reconciliation (nor
 * dependent-resource workflow) of it runs any more, however long that takes, because the runner releases the Lease
 * as soon as {@code stop()} returns. JOSDK interrupts in-flight reconciliations after its
 * {@code reconciliationTerminationTimeout} (zero by default); keep that timeout, plus the time your reconcilers
 * take to react to the interrupt, below {@link LeaseSettings#stopTimeout()}: a stop that outlives it makes the
 * runner leave the Lease to expire (after a loss, under {@code EXIT}, the process exits instead).
 *
 * <p><b>Informers that stop.</b> JOSDK calls its informer-stopped handler when an informer gives up; its default
 * handler calls {@code System.exit(1)} on a fatal error after the cache synced. The configured handler (JOSDK's
 * default, or yours from {@code withInformerStoppedHandler}) is called while the operator runs; while this service
 * stops it, informers that stop are the stop's doing and the handler is not called.
 *
 * <p><b>Failures.</b> Anything the configuration or the registration throws in {@code start}, an {@link Error}
 * included, and any failure of {@code Operator.start()} (an informer that cannot list, a cache that did not sync in
 * time), stops what was started, waits for it as {@code stop()} does, and is rethrown: the runner then gives up the
 * term and applies the loss policy (see {@link LeaderService}). A {@code VirtualMachineError} is rethrown the same
 * way, and the runner treats it as fatal.
 *
 * <p>Thread-safe: the runner calls {@code start} and {@code stop} one at a time on its services thread, and
 * {@link #operator()} may be read from any thread.
 */
public final class OperatorService implements LeaderService {

  private static final Logger LOG = LoggerFactory.getLogger(OperatorService.class);

  private final KubernetesClient client;
  private final Consumer<ConfigurationServiceOverrider> configuration;
  private final ReconcilerRegistration registration;
  // Written by the runner's services thread only (one call at a time); read by operator() from anywhere.
  private volatile RunningOperator running;

  private OperatorService(Builder builder) {
    this.client = builder.client;
    this.configuration = builder.configuration;
    this.registration = builder.registration;
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
   * Builds a new {@code Operator} for {@code term} on a write-gated client, registers the term's reconcilers and
   * starts it. Returns once JOSDK's {@code Operator.start()} returned, which waits for the informers' caches to
   * sync (JOSDK's {@code cacheSyncTimeout}, two minutes by default).
   *
   * @param term the term the operator runs under
   * @throws IllegalStateException if an operator of an earlier term still runs (the runner never does that)
   * @throws Exception whatever the configuration, the registration or {@code Operator.start()} threw, once what
   *     was started has stopped
   */
  @Override
  public void start(LeadershipTerm term) throws Exception {
    Objects.requireNonNull(term, "term");
    if (running != null) {
      throw new IllegalStateException("start(" + term + ") while the operator of an earlier term still runs: "
          + "stop() it first");
    }
    KubernetesClient gated = WriteGate.gate(client, term);
    OperatorTerm started;
    try {
      // Each reconciler registered wrapped, so that an Error of its user code fails the reconciliation.
      started = new OperatorTerm(configuration, gated, term::isValid, GuardedReconciler.GuardingOperator::new);
    } catch (Throwable failure) {
      gated.close();
      throw failure;
    }
    Operator operator = started.operator();
    RunningOperator run = new RunningOperator(started, gated);
    try {
      // Checked again: the configuration is user code and may not answer the same as at build().
      JosdkConfiguration.requireNoOwnLeaderElection(operator.getConfigurationService());
      registration.register(operator, term);
      if (operator.getRegisteredControllersNumber() == 0) {
        throw new IllegalStateException("the registration registered no reconciler: call operator.register(...) "
            + "in the ReconcilerRegistration given to OperatorService.builder().reconcilers(...)");
      }
      requireOperatorsOwnConfiguration(operator);
      started.start();
    } catch (Throwable failure) {
      stopAfterFailedStart(run, failure);
      throw failure;
    }
    running = run;
    LOG.info("Started the operator ({} controller(s)) for {}", operator.getRegisteredControllersNumber(), term);
  }

  /**
   * Fails when a reconciler was registered with a {@code ControllerConfiguration} of another JOSDK
   * {@code ConfigurationService} (with {@code Operator.register(reconciler, configuration)}): JOSDK takes the
   * controller's reconciliation executor from the configuration's service, so its reconciliations would run on an
   * executor this term neither gates nor waits for, and that the operator's stop never shuts down.
   */
  @SuppressWarnings("rawtypes")
  static void requireOperatorsOwnConfiguration(Operator operator) {
    for (RegisteredController controller : operator.getRegisteredControllers()) {
      if (controller.getConfiguration().getConfigurationService() != operator.getConfigurationService()) {
        throw new IllegalStateException("the reconciler '" + controller.getConfiguration().getName() + "' was "
            + "registered with a ControllerConfiguration of another ConfigurationService than the term's operator "
            + "(or of an earlier term's operator): its reconciliations would run on that service's executor, which "
            + "the term neither gates nor waits for when it stops. Register with operator.register(reconciler) or "
            + "operator.register(reconciler, config -> ...), or build the configuration in the registration from "
            + "operator.getConfigurationService().getConfigurationFor(reconciler)");
      }
    }
  }

  private static void stopAfterFailedStart(RunningOperator run, Throwable failure) {
    try {
      run.stop();
    } catch (Throwable second) {
      failure.addSuppressed(second);
    }
  }

  /** A term's operator and the gated client it runs on, which is closed once the operator has stopped. */
  private record RunningOperator(OperatorTerm term, KubernetesClient gated) {
    void stop() {
      try {
        term.stop();
      } finally {
        gated.close();
      }
    }
  }

  /**
   * Stops the running operator and returns once none of its reconciliations runs any more; does nothing when no
   * operator runs. Not cut short by an interrupt, which is kept for the caller.
   *
   * @throws RuntimeException whatever {@code Operator.stop()} threw, once its reconciliations ended
   */
  @Override
  public void stop() {
    RunningOperator stopping = running;
    if (stopping == null) {
      return;
    }
    running = null;
    stopping.stop();
    LOG.info("Stopped the operator; none of its reconciliations runs any more");
  }

  /**
   * The operator of the current term, while it runs: from the end of {@link #start(LeadershipTerm)} until
   * {@link #stop()} begins. For JOSDK's own health information ({@code operator.getRuntimeInfo()}); starting or
   * stopping it is the runner's job.
   *
   * @return the running operator, or empty between terms
   */
  public Optional<Operator> operator() {
    RunningOperator current = running;
    return current == null ? Optional.empty() : Optional.of(current.term().operator());
  }

  @Override
  public String toString() {
    return "OperatorService{" + (running == null ? "no operator running" : "operator running") + "}";
  }

  /**
   * Builds an {@link OperatorService}. Setters reject {@code null} at once; {@link #build()} checks that the
   * required inputs are there and that the configuration leaves JOSDK's own leader election off.
   *
   * <pre>{@code
   * OperatorService widgets = OperatorService.builder()
   *     .client(client)
   *     .configuration(config -> config.withConcurrentReconciliationThreads(4))
   *     .reconcilers((operator, term) -> operator.register(new WidgetReconciler(term)))
   *     .build();
   * }</pre>
   *
   * <p>Not thread-safe: build on one thread.
   */
  public static final class Builder {
    private KubernetesClient client;
    private Consumer<ConfigurationServiceOverrider> configuration = overrider -> { };
    private ReconcilerRegistration registration;

    private Builder() {}

    /**
     * Sets the client the operator reaches the API server with, through a write gate per term. Required. It stays
     * yours: the service never closes it; close it when the process ends. It may be the runner's client.
     *
     * @param client the client
     * @return this builder
     */
    public Builder client(KubernetesClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * Sets JOSDK's configuration overrides, applied to each term's {@code Operator} as with
     * {@code new Operator(overrider -> ...)}. Optional. The client is always the {@linkplain #client(KubernetesClient)
     * builder's}, write-gated (a {@code withKubernetesClient} here is replaced), and
     * {@code withLeaderElectionConfiguration} is rejected by {@link #build()}.
     *
     * @param configuration the overrides; called by {@link #build()} and a few times for each term's operator, so
     *     it should only configure
     * @return this builder
     */
    public Builder configuration(Consumer<ConfigurationServiceOverrider> configuration) {
      this.configuration = Objects.requireNonNull(configuration, "configuration");
      return this;
    }

    /**
     * Sets what registers each term's reconcilers with that term's fresh {@code Operator}. Required.
     *
     * @param registration called once per term, before the operator starts
     * @return this builder
     */
    public Builder reconcilers(ReconcilerRegistration registration) {
      this.registration = Objects.requireNonNull(registration, "registration");
      return this;
    }

    /**
     * Checks the inputs and the configuration, and builds the service. Builds JOSDK's configuration once, which
     * starts no thread and sends no request.
     *
     * @return the service; give it to {@link ElectionRunner.Builder#service(LeaderService)}
     * @throws IllegalStateException if the client or the registration is missing
     * @throws io.github.electionpolicy.InvalidElectionSettingException if the configuration turns on JOSDK's own
     *     leader election (the message names the Lease it configured and says what to change), or sets {@code
     *     ForkJoinPool.commonPool()} as the reconciliation or workflow executor (it never terminates, and a term's
     *     stop waits until they did)
     */
    public OperatorService build() {
      if (client == null) {
        throw new IllegalStateException("no client: call client(kubernetesClient), the client the operator "
            + "reaches the API server with");
      }
      if (registration == null) {
        throw new IllegalStateException("no reconcilers: call reconcilers((operator, term) -> "
            + "operator.register(new YourReconciler()))");
      }
      JosdkConfiguration.check(configuration, client);
      return new OperatorService(this);
    }
  }
}
