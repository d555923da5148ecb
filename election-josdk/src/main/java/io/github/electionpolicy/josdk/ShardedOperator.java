package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.ShardService;
import io.github.electionpolicy.fabric8.ShardedRunner;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.fabric8.WriteGate;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.api.config.ConfigurationService;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.processing.Controller;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Java Operator SDK {@link Operator} that runs on every replica of a sharded controller for the whole process and
 * reconciles only the resources of the shards this replica owns, each under its shard's term: the warm sharded mode.
 * Its informers hold every resource on every replica, so a shard that moves here is reconciled at once from the cache,
 * with no cache sync and no new change. It is the {@link ShardService} of a {@link ShardedRunner}.
 *
 * <pre>{@code
 * KubernetesClient client = new KubernetesClientBuilder().build();
 * ShardedOperator widgets = ShardedOperator.builder()
 *     .client(client)
 *     .shards(16)
 *     .reconcilers((operator, shards) -> operator.register(new WidgetReconciler(shards)))
 *     .start();                                  // the informers list and sync on every replica, before any shard
 * ShardedRunner runner = ShardedRunner.builder()
 *     .client(client)
 *     .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.usingKubernetesApi("kubernetes"))
 *     .settings(LeaseSettings.builder().leaseName("widget-operator").build())
 *     .shards(16)
 *     .service(widgets)                          // start(shard, term) / stop(shard) as shards move
 *     .start();
 * Runtime.getRuntime().addShutdownHook(new Thread(() -> {
 *   runner.close();                              // hands the shards over, each once its reconciliations ended
 *   widgets.close();                             // then stops the operator
 * }));
 * }</pre>
 *
 * <p><b>Which reconciliations run.</b> Every event of every resource reaches the operator on every replica, as JOSDK
 * delivers it; before each reconciliation, the operator asks which shard the resource is in (by {@code metadata.uid},
 * {@link Shards#shardOf(HasMetadata)}, the runner's split) and runs the reconciler (and its managed dependents, or the
 * cleaner) only if this replica owns that shard under a valid term. Otherwise the reconciliation answers as one with
 * nothing to do ({@code UpdateControl.noUpdate()}, {@code DeleteControl.noFinalizerRemoval()}). The check is made in
 * JOSDK's {@code Metrics}, which wraps each reconciliation (a {@code withMetrics} of yours is wrapped, and still called
 * for every reconciliation).
 *
 * <p><b>A shard that moves here</b> ({@link #start(int, LeadershipTerm)}): every resource of the shard in each
 * controller's cache gets an event at once, from an event source of the operator's own, and is reconciled under the
 * new term. The reconciliation executor (yours, {@code withExecutorService}, or JOSDK's default pool) is fed in
 * turns: the reconciliations of each shard that moves here wait in a lane of their own, everything else in one more,
 * and the pool gets one task of each lane in turn, no more at a time than it has threads; so a shard's first
 * reconciliation does not wait behind the reconciliations of the shards that moved here just before it. <b>A shard
 * that moves away</b> ({@link #stop(int)}): no reconciliation of the shard begins from then on,
 * and {@code stop} returns only once those that began before have ended (JOSDK's own writes after the reconciler
 * included), so none of this replica's work on the shard still runs when the next owner starts.
 *
 * <p><b>Writes.</b> The operator runs on a view of your client, {@link WriteGate#gate(KubernetesClient,
 * WriteGate.Check)}, fenced by the shard's term: a write sent from inside a reconciliation (what JOSDK writes on its
 * behalf, an {@code UpdateControl}'s patch of the resource or its status, a finalizer added or removed, and what the
 * reconciler writes through {@code context.getClient()}, its managed dependents' included) is sent only while the
 * resource's shard is still owned here under the term the reconciliation began with and that term is valid; otherwise
 * it is refused before it is sent, with a {@link io.github.electionpolicy.fabric8.TermEndedException}, and the
 * reconciliation fails as for any failed call (JOSDK retries it, and a retry of a shard that moved away is skipped). A
 * replica that does not own the shard sends nothing: the finalizer JOSDK adds before it calls any reconciler, on every
 * replica whose cache has the resource, is refused (with a {@code KubernetesClientException} that says the shard is
 * not owned here) everywhere but on the owner. A write of the resource being reconciled itself (its path, its status
 * or scale) is sent on the condition that the object under its name still has the uid the reconciliation began with,
 * which the API server checks: shards go by uid and JOSDK writes by name, so a write that outlives the object must
 * not land on another one made under its name (docs/sharding.md says how each kind of write carries the uid, and the
 * case kube-apiserver does not check). Reads pass, and so do writes made outside any reconciliation. Like
 * every write gate, the view makes no automatic retries, for reads either (informers' lists and watches included): a
 * failed request fails at once, and JOSDK's retry or fabric8's informer takes it from there. {@link
 * #clientFor(HasMetadata)} is the resource's shard's own {@link WriteGate}, for writes outside JOSDK's reconciliation
 * threads, and {@link #termFor(HasMetadata)}'s {@code leaseTransitions()} is the fencing token to store with the data.
 * As with any write gate, a write that passed just before the term ended may still land after it: write conditionally
 * (with the {@code resourceVersion} read) to make such a write harmless.
 *
 * <p>Unlike {@link OperatorService}'s operator-per-term mode, nothing is reset when a shard moves: JOSDK's caches and
 * its per-resource state (retry timers) live as long as the process. Thread-safe.
 */
public final class ShardedOperator implements ShardService, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ShardedOperator.class);

  private final ShardOwnership ownership;
  private final OperatorTerm operator;
  // The reconciliation executor: the configured one, fed so that a moved shard's tasks do not wait behind others'.
  private final LaneExecutor reconciliations;
  // The client the operator runs on: the user's, its writes checked by ShardFence; closed once the operator stopped.
  private final KubernetesClient fenced;
  private final List<ShardMoves<?>> moves = new ArrayList<>();
  private final Object closing = new Object();
  private volatile boolean closed;

  private ShardedOperator(Builder builder) {
    this.ownership = new ShardOwnership(Shards.of(builder.shards), builder.client);
    ConfigurationService user = JosdkConfiguration.userConfiguration(builder.configuration, builder.client);
    ShardGate gate = new ShardGate(user.getMetrics(), ownership);
    // Taken once: the overrides below are applied a few times while the operator is built.
    ExecutorService workflows = new ShardContextExecutor(user.getWorkflowExecutorService(), gate);
    ExecutorService pool = user.getExecutorService();
    JosdkConfiguration.requireRejectionsReported(pool);
    JosdkConfiguration.warnIfSizeUnknown(pool, user.concurrentReconciliationThreads());
    this.reconciliations = new LaneExecutor(pool, user.concurrentReconciliationThreads());
    Consumer<ConfigurationServiceOverrider> configuration = builder.configuration.andThen(o -> o.withMetrics(gate)
        .withWorkflowExecutorService(workflows).withExecutorService(reconciliations));
    this.fenced = WriteGate.gate(builder.client, new ShardFence(gate, ownership));
    try {
      // Each reconciler registered wrapped, so that an Error of its updateErrorStatus fails the reconciliation.
      this.operator = new OperatorTerm(configuration, fenced, () -> !closed, GuardedReconciler.GuardingOperator::new);
    } catch (RuntimeException | Error e) {
      fenced.close();
      throw e;
    }
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
   * The shards of the controller's work: the split the runner owns shards of.
   *
   * @return the shards
   */
  public Shards shards() {
    return ownership.shards();
  }

  /**
   * The running operator, for JOSDK's own health information ({@code getRuntimeInfo()}); starting and stopping it is
   * this class's job.
   *
   * @return the operator
   */
  public Operator operator() {
    return operator.operator();
  }

  /**
   * Whether {@code resource} is this replica's to reconcile now, and under which term: its shard's term while this
   * replica owns the shard and the term is valid.
   *
   * @param resource a resource with a uid, as the operator's informers have it
   * @return the term of the resource's shard, if owned here now
   * @throws IllegalArgumentException if the resource has no uid
   */
  public Optional<LeadershipTerm> termFor(HasMetadata resource) {
    return ownership.termOf(resource);
  }

  /**
   * The client to write {@code resource}'s changes with: the write gate of its shard's term, which refuses every write
   * once that term ended. Reads pass as through the operator's client.
   *
   * <p>Empty from the moment a {@link #stop(int)} of the shard begins, as the shard is then no longer this replica's:
   * the writes of its reconciliations still running are refused from then on too (the stop waits for them to end,
   * and JOSDK's retry runs them again under the next owner). The same client is returned for the whole term; it is
   * closed once the shard's stop returns.
   *
   * @param resource a resource with a uid
   * @return the gated client of the resource's shard, while the shard is owned here
   * @throws IllegalArgumentException if the resource has no uid
   * @throws RuntimeException what opening the term's write gate threw ({@link WriteGate#gate(KubernetesClient,
   *     LeadershipTerm)} builds fabric8 clients), if it was not open yet: the next call tries again
   */
  public Optional<KubernetesClient> clientFor(HasMetadata resource) {
    return ownership.clientFor(resource);
  }

  /**
   * The runner gave this replica {@code shard}: from now on its resources are reconciled here under {@code term}, and
   * each of them in every controller's cache gets an event at once.
   *
   * @param shard the shard
   * @param term the term of the shard's Lease
   * @throws IllegalStateException if the operator was closed, or the shard is already owned here
   * @throws RuntimeException what firing the shard's events threw (JOSDK's event handling, your {@code Metrics}), or
   *     opening the term's write gate (after the events); the shard is then not owned here any more, as after {@link
   *     #stop(int)}
   */
  @Override
  public void start(int shard, LeadershipTerm term) {
    Objects.requireNonNull(term, "term");
    if (closed) {
      throw new IllegalStateException("start(" + shard + ", " + term + ") after close(): the operator has stopped");
    }
    ownership.own(shard, term);
    int fired;
    try {
      // JOSDK submits each event's reconciliation from the firing thread: the shard's tasks get a lane of their own.
      fired = reconciliations.moving(() -> {
        int events = 0;
        for (ShardMoves<?> source : moves) {
          events += source.moved(shard);
        }
        return events;
      });
      // After the events: a move's first reconciliations need not wait for the two clients a gate builds.
      ownership.openGate(shard, term);
    } catch (RuntimeException | Error failure) {
      // A start that throws must undo what it began (the runner calls no stop then): the shard is given up again,
      // once the reconciliations the events fired so far began have ended, as a stop would.
      try {
        ownership.release(shard);
      } catch (RuntimeException | Error second) {
        failure.addSuppressed(second);
      }
      throw failure;
    }
    LOG.debug("Shard {} is this replica's under {}: {} cached resource(s) to reconcile", shard, term, fired);
  }

  /**
   * The shard moves away: no reconciliation of its resources begins here from now on, and this returns once those
   * that began before have ended, however long that takes (the runner bounds its wait by the stop timeout). Not cut
   * short by an interrupt, which is kept for the caller.
   *
   * @param shard the shard
   */
  @Override
  public void stop(int shard) {
    ownership.release(shard);
  }

  /**
   * Stops the operator, and returns once none of its reconciliations runs any more. Close the {@link ShardedRunner}
   * first, so that its shards are handed over while their work can still stop cleanly. Idempotent.
   */
  @Override
  public void close() {
    synchronized (closing) {
      if (closed) {
        return;
      }
      closed = true;
      try {
        operator.stop();
      } finally {
        fenced.close();
      }
    }
    LOG.info("Stopped the sharded operator; none of its reconciliations runs any more");
  }

  private void begin(ShardedRegistration registration) {
    Operator running = operator.operator();
    try {
      JosdkConfiguration.requireNoOwnLeaderElection(running.getConfigurationService());
      registration.register(running, this);
      if (running.getRegisteredControllersNumber() == 0) {
        throw new IllegalStateException("the registration registered no reconciler: call operator.register(...) in "
            + "the ShardedRegistration given to ShardedOperator.builder().reconcilers(...)");
      }
      OperatorService.requireOperatorsOwnConfiguration(running);
      for (RegisteredController<?> registered : running.getRegisteredControllers()) {
        ShardMoves.indexByShard(ownership.shards(),
            ((Controller<?>) registered).getEventSourceManager().getControllerEventSource());
      }
      operator.start();
      for (RegisteredController<?> registered : running.getRegisteredControllers()) {
        moves.add(addMoves((Controller<?>) registered));
      }
    } catch (Throwable failure) {
      closed = true;
      try {
        operator.stop();
      } catch (Throwable second) {
        failure.addSuppressed(second);
      } finally {
        fenced.close();
      }
      if (failure instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (failure instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException("the registration of the sharded operator's reconcilers failed: " + failure,
          failure);
    }
  }

  private <P extends HasMetadata> ShardMoves<P> addMoves(Controller<P> controller) {
    ShardMoves<P> source = new ShardMoves<>(controller.getEventSourceManager().getControllerEventSource());
    controller.getEventSourceManager().dynamicallyRegisterEventSource(source);
    return source;
  }

  @Override
  public String toString() {
    return "ShardedOperator{" + ownership.shards() + (closed ? ", closed" : "") + "}";
  }

  /**
   * Builds and starts a {@link ShardedOperator}. Setters reject {@code null} at once; {@link #start()} checks that the
   * required settings are there.
   *
   * <p>Not thread-safe: build on one thread.
   */
  public static final class Builder {
    private KubernetesClient client;
    private int shards;
    private Consumer<ConfigurationServiceOverrider> configuration = overrider -> { };
    private ShardedRegistration registration;

    private Builder() {}

    /**
     * Sets the client the operator reaches the API server with. Required. It stays yours: close it when the process
     * ends. It may be the runner's.
     *
     * @param client the client
     * @return this builder
     */
    public Builder client(KubernetesClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * Sets the number of shards: the same as the runner's {@code shards(n)}. Required.
     *
     * @param count from 1 to {@link Shards#MAX_COUNT}
     * @return this builder
     */
    public Builder shards(int count) {
      this.shards = count;
      return this;
    }

    /**
     * Sets JOSDK's configuration overrides, as with {@code new Operator(overrider -> ...)}. Optional. The client is
     * always the {@linkplain #client(KubernetesClient) builder's}, {@code withLeaderElectionConfiguration} is refused,
     * a {@code withMetrics} is wrapped by the ownership gate, and the reconciliation executor ({@code
     * withExecutorService}) is fed in turns, one task per thread of it at a time (its size: a {@code
     * ThreadPoolExecutor}'s core size, a {@code ForkJoinPool}'s parallelism, else {@code
     * withConcurrentReconciliationThreads}, which then bounds how many reconciliations run at once).
     *
     * @param configuration the overrides; called a few times while the operator is built, so it should only configure
     * @return this builder
     */
    public Builder configuration(Consumer<ConfigurationServiceOverrider> configuration) {
      this.configuration = Objects.requireNonNull(configuration, "configuration");
      return this;
    }

    /**
     * Sets what registers the reconcilers with the operator. Required.
     *
     * @param registration called once, before the operator starts
     * @return this builder
     */
    public Builder reconcilers(ShardedRegistration registration) {
      this.registration = Objects.requireNonNull(registration, "registration");
      return this;
    }

    /**
     * Builds the operator, registers the reconcilers and starts it: returns once JOSDK's {@code Operator.start()}
     * returned, that is once every informer's cache synced (JOSDK's {@code cacheSyncTimeout}). No shard is owned yet:
     * give the operator to {@link ShardedRunner.Builder#service(ShardService)}.
     *
     * @return the running operator
     * @throws IllegalStateException if a required setting is missing, the registration failed or registered nothing,
     *     or the operator did not start; what was started has stopped
     * @throws IllegalArgumentException if the shard count is not valid
     * @throws io.github.electionpolicy.InvalidElectionSettingException if the configuration turns on JOSDK's own
     *     leader election, sets a reconciliation pool whose rejection policy drops tasks without a word
     *     ({@code DiscardPolicy}, {@code DiscardOldestPolicy}), or sets {@code ForkJoinPool.commonPool()} as the
     *     reconciliation or workflow executor (it never terminates, and the operator's close waits until they did)
     */
    public ShardedOperator start() {
      if (client == null) {
        throw new IllegalStateException("no client: call client(kubernetesClient), the client the operator reaches "
            + "the API server with");
      }
      if (registration == null) {
        throw new IllegalStateException("no reconcilers: call reconcilers((operator, shards) -> "
            + "operator.register(new YourReconciler(shards)))");
      }
      if (shards == 0) {
        throw new IllegalStateException("no shard count: call shards(n) with the count given to the runner's "
            + "ShardedRunner.builder().shards(n)");
      }
      Shards.of(shards); // checks the count, with its message
      JosdkConfiguration.check(configuration, client);
      ShardedOperator built = new ShardedOperator(this);
      built.begin(registration);
      return built;
    }
  }
}
