package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.javaoperatorsdk.operator.api.config.ConfigurationService;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.InformerStoppedHandler;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionHandler;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The user's JOSDK configuration, what this module sets on top of it, and the one rule it imposes: JOSDK's own
 * leader election stays off. Stateless; thread-safe.
 */
final class JosdkConfiguration {

  private static final Logger LOG = LoggerFactory.getLogger(OperatorService.class);

  /** The setting the check names in its message: the overrider method that turns JOSDK's election on. */
  static final String LEADER_ELECTION_SETTING = "ConfigurationServiceOverrider.withLeaderElectionConfiguration";

  private JosdkConfiguration() {}

  /**
   * The user's overrides with the operator's client set: used to check them, and to read what they configure.
   *
   * @param user the user's overrides
   * @param client the client the operator must use
   * @return the configuration the user's overrides describe
   */
  static ConfigurationService userConfiguration(Consumer<ConfigurationServiceOverrider> user, KubernetesClient client) {
    return ConfigurationService.newOverriddenConfigurationService(overrider -> {
      user.accept(overrider);
      overrider.withKubernetesClient(client);
    });
  }

  /**
   * The overrides one term's {@code Operator} is built with: the user's, then what this module sets, which wins.
   *
   * <ul>
   *   <li>the client, the term's write-gated one, whatever client the user set;
   *   <li>{@code closeClientOnStop} off: {@code Operator.stop()} returns while interrupted reconciliations may still
   *       run, and they should meet the write gate's refusal, not a closed client; {@link OperatorTerm} closes the
   *       gated client once they ended;
   *   <li>the reconciliation executor: the configured one (by default a new fixed pool), each of whose tasks runs
   *       only while the term is valid ({@link TermGatedExecutor});
   *   <li>the workflow executor: the configured one (by default a new fixed pool), set explicitly so that JOSDK,
   *       which forgets it when the operator stops, cannot lazily create another one for a reconciliation that
   *       outlived the stop: a dependent submitted after the stop is refused by the executor the stop shut down;
   *   <li>the informer-stopped handler: the configured one (by default JOSDK's, which calls {@code System.exit(1)}
   *       on a fatal informer error), except while the operator is being stopped: informers that fail then (say,
   *       because the term's client closes under an informer JOSDK left running after a failed start) are the
   *       stop's doing, not a failure of the running operator, and must not end the process.
   * </ul>
   *
   * @param user the user's overrides
   * @param gated the term's write-gated client
   * @param termValid whether the term is still valid
   * @param stopping whether the operator is being stopped
   * @return the overrides
   */
  static Consumer<ConfigurationServiceOverrider> forTerm(Consumer<ConfigurationServiceOverrider> user,
      KubernetesClient gated, BooleanSupplier termValid, BooleanSupplier stopping) {
    ConfigurationService configuredByUser = userConfiguration(user, gated);
    ExecutorService reconciliations = configuredByUser.getExecutorService();
    if (reconciliations.isShutdown()) {
      throw new IllegalStateException("the reconciliation executor of the configuration is shut down: an earlier term's "
          + "operator shut it down when it stopped; create the executor inside the configuration callback "
          + "(config -> config.withExecutorService(Executors.newFixedThreadPool(n))) so each term's operator gets "
          + "its own");
    }
    ExecutorService gatedReconciliations = new TermGatedExecutor(reconciliations, termValid);
    // Set explicitly, not left to JOSDK's lazy default: Operator.stop() shuts the workflow executor down and then
    // forgets it, and a reconciliation still running after the stop would make JOSDK create a new one (a fresh
    // non-daemon pool from the configuration) whose dependents nothing waits for or shuts down. With the term's
    // executor set here, JOSDK re-wraps this one, which the stop shut down: a late dependent is refused instead.
    ExecutorService workflows = configuredByUser.getWorkflowExecutorService();
    if (workflows.isShutdown()) {
      throw new IllegalStateException("the workflow executor of the configuration is shut down: an earlier term's "
          + "operator shut it down when it stopped; create the executor inside the configuration callback "
          + "(config -> config.withWorkflowExecutorService(Executors.newFixedThreadPool(n))) so each term's "
          + "operator gets its own");
    }
    Optional<InformerStoppedHandler> configured = configuredByUser.getInformerStoppedHandler();
    InformerStoppedHandler handler = new InformerStoppedHandler() {
      @Override
      @SuppressWarnings("rawtypes")
      public void onStop(SharedIndexInformer informer, Throwable ex) {
        if (stopping.getAsBoolean()) {
          LOG.debug("Informer {} stopped while the operator was being stopped", informer, ex);
          return;
        }
        configured.ifPresent(h -> h.onStop(informer, ex));
      }
    };
    return overrider -> {
      user.accept(overrider);
      overrider.withKubernetesClient(gated).withCloseClientOnStop(false).withInformerStoppedHandler(handler)
          .withExecutorService(gatedReconciliations).withWorkflowExecutorService(workflows);
    };
  }

  /**
   * Builds the configuration the overrides describe, without building an {@code Operator} (no thread, no
   * request), to check it at start-up.
   *
   * @throws InvalidElectionSettingException if it turns on JOSDK's own leader election, or sets {@link
   *     ForkJoinPool#commonPool()} as an executor
   */
  static void check(Consumer<ConfigurationServiceOverrider> user, KubernetesClient client) {
    ConfigurationService configuration = userConfiguration(user, client);
    requireNoOwnLeaderElection(configuration);
    requireStoppable(configuration.getExecutorService(), EXECUTOR_SETTING);
    requireStoppable(configuration.getWorkflowExecutorService(), WORKFLOW_EXECUTOR_SETTING);
  }

  /** The setting {@link #requireStoppable} names for the workflow executor. */
  static final String WORKFLOW_EXECUTOR_SETTING = "ConfigurationServiceOverrider.withWorkflowExecutorService";

  /**
   * Fails when {@code executor} is {@link ForkJoinPool#commonPool()}, which ignores {@code shutdown()} and never
   * terminates: the operator's stop waits until its executors terminated (so that no reconciliation still runs when
   * the Lease or the shard is released), and would wait for ever.
   *
   * @throws InvalidElectionSettingException naming the setting and the fix
   */
  static void requireStoppable(ExecutorService executor, String setting) {
    if (executor == ForkJoinPool.commonPool()) {
      throw new InvalidElectionSettingException(setting, "ForkJoinPool.commonPool()",
          "an executor that terminates once shut down (the common pool never does, and the operator's stop waits until "
              + "its executors terminated, so that no reconciliation still runs when the Lease is released: it would "
              + "wait for ever)",
          "give the operator a pool of its own, e.g. Executors.newFixedThreadPool(n) or new ForkJoinPool(n), created "
              + "inside the configuration callback");
    }
  }

  /** The setting {@link #requireRejectionsReported} names: the overrider method that sets the reconciliation pool. */
  static final String EXECUTOR_SETTING = "ConfigurationServiceOverrider.withExecutorService";

  /**
   * Fails when the reconciliation executor is a {@link ThreadPoolExecutor} whose rejection policy drops a task without
   * a word ({@link ThreadPoolExecutor.DiscardPolicy}, {@link ThreadPoolExecutor.DiscardOldestPolicy}). A sharded
   * operator hands that pool at most one task per thread at a time, and counts a task handed until it ends: a task the
   * pool drops never ends, so after as many drops as the pool has threads no reconciliation would ever be handed to
   * it again, and the operator would stand still. (Plain JOSDK loses the dropped reconciliation too.)
   *
   * @param reconciliations the configured reconciliation executor
   * @throws InvalidElectionSettingException naming the setting, the policy and the fix
   */
  static void requireRejectionsReported(ExecutorService reconciliations) {
    if (!(reconciliations instanceof ThreadPoolExecutor pool)) {
      return;
    }
    RejectedExecutionHandler policy = pool.getRejectedExecutionHandler();
    if (policy instanceof ThreadPoolExecutor.DiscardPolicy || policy instanceof ThreadPoolExecutor.DiscardOldestPolicy) {
      throw new InvalidElectionSettingException(EXECUTOR_SETTING,
          "a ThreadPoolExecutor whose rejection policy is " + policy.getClass().getSimpleName(),
          "a pool whose rejection policy throws (AbortPolicy, the default) or runs the task on the thread that handed "
              + "it over (CallerRunsPolicy): a sharded operator counts each reconciliation it hands the pool until it "
              + "ends, and one the pool drops without a word never ends, so the operator would stop reconciling",
          "build the pool with the default policy, or call setRejectedExecutionHandler(new "
              + "ThreadPoolExecutor.CallerRunsPolicy()) on it");
    }
  }

  /**
   * Warns when the reconciliation executor's thread count cannot be read (it is neither a {@link ThreadPoolExecutor}
   * nor a {@link ForkJoinPool}: {@code Executors.newSingleThreadExecutor()}, a wrapper): a sharded operator then hands
   * it up to {@code configuredThreads} reconciliations at a time, and if it has fewer threads the rest wait in its own
   * queue, in the order handed, so a shard that moves here waits behind them for its first reconciliation.
   *
   * @param reconciliations the configured reconciliation executor
   * @param configuredThreads JOSDK's {@code concurrentReconciliationThreads()}
   * @return whether it warned
   */
  static boolean warnIfSizeUnknown(ExecutorService reconciliations, int configuredThreads) {
    if (reconciliations instanceof ThreadPoolExecutor || reconciliations instanceof ForkJoinPool) {
      return false;
    }
    LOG.warn("The reconciliation executor ({}, a {}) is neither a ThreadPoolExecutor nor a ForkJoinPool, so its thread "
        + "count cannot be read: the sharded operator hands it up to {} reconciliations at a time "
        + "(concurrentReconciliationThreads). If it has fewer threads, the rest wait in its own queue and a shard that "
        + "moves here waits behind them for its first reconciliation. Pass a ThreadPoolExecutor or a ForkJoinPool to "
        + "{}, or set withConcurrentReconciliationThreads to its thread count", reconciliations,
        reconciliations.getClass().getName(), configuredThreads, EXECUTOR_SETTING);
    return true;
  }

  /**
   * Fails when JOSDK's own leader election is configured: it would run a second election, on a second Lease,
   * inside an operator this module starts only while it leads, and exit the process on its own loss.
   *
   * @throws InvalidElectionSettingException naming the setting, the Lease it configures and the fix
   */
  static void requireNoOwnLeaderElection(ConfigurationService configuration) {
    Optional<LeaderElectionConfiguration> own = configuration.getLeaderElectionConfiguration();
    if (own.isEmpty()) {
      return;
    }
    LeaderElectionConfiguration election = own.get();
    String lease = election.getLeaseNamespace().map(ns -> ns + "/").orElse("") + election.getLeaseName();
    throw new InvalidElectionSettingException(LEADER_ELECTION_SETTING, "Lease " + lease,
        "none: election-policy's ElectionRunner elects this operator and starts it only while it leads, so JOSDK's "
            + "own leader election must stay off (two elections on two Leases would each believe they decide, and "
            + "JOSDK's would exit the process on its own loss)",
        "remove withLeaderElectionConfiguration(...) from the configuration given to OperatorService.builder()"
            + ".configuration(...), and give its Lease name to LeaseSettings.builder().leaseName(\""
            + election.getLeaseName() + "\") instead");
  }
}
