package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.ExecutorServiceManager;
import io.javaoperatorsdk.operator.health.InformerHealthIndicator;
import io.javaoperatorsdk.operator.health.InformerWrappingEventSourceHealthIndicator;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.LifecycleAware;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One term's operator: the {@link Operator} built for the term on its write-gated client, and a stop that returns
 * only once nothing of it runs any more.
 *
 * <p>Three gaps in JOSDK 5.3's {@code Operator.stop()} that this closes (the third with JosdkConfiguration):
 * <ul>
 *   <li>It shuts the reconciliation executor down, waits JOSDK's {@code reconciliationTerminationTimeout} (zero by
 *       default) and then interrupts what still runs, but does not wait for the interrupted reconciliations to end.
 *       One that does not react to the interrupt would still run when the runner releases the Lease, and the next
 *       leader's reconciliation of the same resource would overlap it. So the stop waits for the executors'
 *       termination itself.
 *   <li>When {@code Operator.start()} fails, JOSDK stops its executors but not the controllers it had already
 *       started: their event processors and event sources go on. So after a failed start the stop stops them.
 *   <li>It shuts the workflow executor down and then forgets it, so a reconciliation still running afterwards
 *       would make JOSDK lazily create a new one (a non-daemon pool) whose dependents nothing waits for. The term's
 *       configuration sets the workflow executor explicitly, so JOSDK re-wraps the one the stop shut down and a
 *       late dependent is refused.
 * </ul>
 *
 * <p>Not thread-safe: used by the runner's services thread, one call at a time.
 */
final class OperatorTerm {

  private static final Logger LOG = LoggerFactory.getLogger(OperatorService.class);
  /** How often a stop that is still waiting for reconciliations says so. */
  static final Duration STILL_WAITING_EVERY = Duration.ofSeconds(5);

  private final Operator operator;
  private final ExecutorServiceManager executors;
  // The executors reconciliations and dependent workflows run on, taken before the operator starts: a stop (JOSDK's
  // own, after a failed start, included) forgets the workflow executor.
  private final List<ExecutorService> reconciling;
  // Set when the stop begins; read by the informer-stopped handler on fabric8's threads.
  private final AtomicBoolean stopping = new AtomicBoolean();
  // Whether Operator.start() was called, and whether it returned normally.
  private boolean startCalled;
  private boolean started;

  /**
   * Builds the term's operator on {@code gatedClient} with the user's configuration (see JosdkConfiguration). The
   * client stays the caller's to close, once {@link #stop()} returned.
   *
   * @param termValid whether the term is still valid: no reconciliation begins once it answers false
   */
  OperatorTerm(Consumer<ConfigurationServiceOverrider> configuration, KubernetesClient gatedClient,
      BooleanSupplier termValid) {
    this(configuration, gatedClient, termValid, Operator::new);
  }

  /**
   * As {@link #OperatorTerm(Consumer, KubernetesClient, BooleanSupplier)}, with the operator built by {@code
   * operators} from the term's configuration (a {@link GuardedReconciler.GuardingOperator}, say).
   */
  OperatorTerm(Consumer<ConfigurationServiceOverrider> configuration, KubernetesClient gatedClient,
      BooleanSupplier termValid, Function<Consumer<ConfigurationServiceOverrider>, Operator> operators) {
    Objects.requireNonNull(gatedClient, "gatedClient");
    this.operator = operators.apply(JosdkConfiguration.forTerm(configuration, gatedClient, termValid, stopping::get));
    this.executors = operator.getConfigurationService().getExecutorServiceManager();
    this.reconciling = List.of(executors.reconcileExecutorService(), executors.workflowExecutorService());
  }

  Operator operator() {
    return operator;
  }

  /** Starts the operator; see {@code Operator.start()}. */
  void start() {
    startCalled = true;
    operator.start();
    started = true;
  }

  /**
   * Stops the operator and returns once none of its reconciliation or workflow threads runs, however long that
   * takes: returning earlier would let the runner release the Lease while a reconciliation still runs. The
   * runner bounds its own wait by {@code stopTimeout} and then leaves the Lease to expire instead.
   *
   * <p>Not cut short by an interrupt, which is kept for the caller.
   *
   * @throws RuntimeException what the operator's stop threw, once the wait is over
   */
  void stop() {
    stopping.set(true);
    Throwable failure = null;
    if (startCalled && !started) {
      failure = stopControllersLeftRunning();
    }
    try {
      operator.stop();
    } catch (RuntimeException | Error e) {
      failure = addTo(failure, e);
    }
    boolean interrupted = false;
    try {
      for (ExecutorService executor : reconciling) {
        // Operator.stop() shut them down, unless it failed first: shut down here too, idempotently.
        executor.shutdownNow();
        interrupted |= awaitTermination(executor);
      }
      // JOSDK never shuts this one down (it runs the informers' cache clean-ups), and the next term has its own.
      executors.scheduledExecutorService().shutdownNow();
    } catch (RuntimeException | Error e) {
      failure = addTo(failure, e);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    if (failure instanceof RuntimeException runtime) {
      throw runtime;
    }
    if (failure instanceof Error error) {
      throw error;
    }
  }

  /**
   * Stops what JOSDK's failed {@code start()} left running: it shuts its executors down but does not stop the
   * controllers it had started, whose event processors and event sources (retry timers, informers) go on. Each is
   * stopped here, directly: {@code Controller.stop()} would need the executors JOSDK already shut down, and skips
   * the event source whose start failed, whose informer nevertheless runs.
   *
   * @return what the stops threw, or null
   */
  private Throwable stopControllersLeftRunning() {
    Throwable failure = null;
    for (RegisteredController<?> registered : operator.getRegisteredControllers()) {
      if (registered instanceof Controller<?> controller) {
        try {
          controller.getEventProcessor().stop();
        } catch (RuntimeException | Error e) {
          failure = addTo(failure, e);
        }
        for (EventSource<?, ?> source : controller.getEventSourceManager().allEventSources()) {
          try {
            source.stop();
          } catch (RuntimeException | Error e) {
            failure = addTo(failure, e);
          }
        }
        failure = addTo(failure, stopInformers(controller));
      }
    }
    return failure;
  }

  /**
   * Stops the informers of a controller's informer event sources one by one: an event source whose start failed
   * is not marked running and ignores its stop, but its informer runs (and, its cache synced, keeps watching
   * through a client that may be closed). JOSDK exposes the informers only through their health indicators, which
   * are the informer wrappers themselves; stopping a stopped one does nothing.
   */
  private static Throwable stopInformers(Controller<?> controller) {
    Throwable failure = null;
    for (InformerWrappingEventSourceHealthIndicator<?> source
        : controller.getControllerHealthInfo().informerEventSourceHealthIndicators().values()) {
      Collection<InformerHealthIndicator> informers;
      try {
        informers = source.informerHealthIndicators().values();
      } catch (RuntimeException neverStarted) {
        // JOSDK creates an event source's informers when it starts: one that never started has none to stop.
        continue;
      }
      for (InformerHealthIndicator informer : informers) {
        if (informer instanceof LifecycleAware lifecycle) {
          try {
            lifecycle.stop();
          } catch (RuntimeException | Error e) {
            failure = addTo(failure, e);
          }
        }
      }
    }
    return failure;
  }

  private static Throwable addTo(Throwable first, Throwable next) {
    if (next == null) {
      return first;
    }
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }

  /** Waits for the executor's termination, uninterruptibly; whether an interrupt came meanwhile. */
  private static boolean awaitTermination(ExecutorService executor) {
    boolean interrupted = false;
    long begun = System.nanoTime();
    while (true) {
      try {
        if (executor.awaitTermination(STILL_WAITING_EVERY.toNanos(), TimeUnit.NANOSECONDS)) {
          return interrupted;
        }
        LOG.warn("The operator's reconciliations have not ended {} ms after it was stopped; still waiting, because "
            + "the Lease may be given up only once none runs (a reconciler that ignores interrupts keeps it from "
            + "ending)", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begun));
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
  }

  @Override
  public String toString() {
    return "OperatorTerm{" + operator.getRegisteredControllersNumber() + " controller(s), "
        + (started ? "started" : "not started") + "}";
  }
}
