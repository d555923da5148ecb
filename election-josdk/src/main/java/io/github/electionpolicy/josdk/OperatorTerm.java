package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.ExecutorServiceManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One term's operator: the {@link Operator} built for the term and the write-gated client it runs on, and the
 * stop that returns only once no reconciliation of it runs any more.
 *
 * <p>Why the extra wait: {@code Operator.stop()} shuts its reconciliation executor down, waits JOSDK's
 * {@code reconciliationTerminationTimeout} (zero by default) and then interrupts what still runs, but it does not
 * wait for the interrupted reconciliations to end. A reconciliation that does not react to the interrupt would
 * still run when the runner releases the Lease, and the next leader's reconciliation of the same resource would
 * overlap it. So the stop waits for the executors' termination itself.
 *
 * <p>Not thread-safe: used by the runner's reconciler thread, one call at a time.
 */
final class OperatorTerm {

  private static final Logger LOG = LoggerFactory.getLogger(OperatorService.class);
  /** How often a stop that is still waiting for reconciliations says so. */
  static final Duration STILL_WAITING_EVERY = Duration.ofSeconds(5);

  private final Operator operator;
  private final KubernetesClient gatedClient;

  OperatorTerm(Operator operator, KubernetesClient gatedClient) {
    this.operator = Objects.requireNonNull(operator, "operator");
    this.gatedClient = Objects.requireNonNull(gatedClient, "gatedClient");
  }

  Operator operator() {
    return operator;
  }

  /**
   * Stops the operator and returns once none of its reconciliation or workflow threads runs, however long that
   * takes: returning earlier would let the runner release the Lease while a reconciliation still runs. The
   * runner bounds its own wait by {@code stopTimeout} and then leaves the Lease to expire instead.
   *
   * <p>Not cut short by an interrupt, which is kept for the caller.
   *
   * @throws RuntimeException whatever {@code Operator.stop()} threw, once the wait is over
   */
  void stop() {
    ExecutorServiceManager executors = operator.getConfigurationService().getExecutorServiceManager();
    // Taken before the stop: the stop forgets the workflow executor (a later call would create a new one).
    List<ExecutorService> reconciling = new ArrayList<>();
    reconciling.add(executors.reconcileExecutorService());
    reconciling.add(executors.workflowExecutorService());
    Throwable failure = null;
    try {
      operator.stop();
    } catch (RuntimeException | Error e) {
      failure = e;
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
      gatedClient.close();
    } catch (RuntimeException | Error e) {
      if (failure == null) {
        failure = e;
      } else {
        failure.addSuppressed(e);
      }
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

  /** Waits for the executor's termination, uninterruptibly; whether an interrupt came meanwhile. */
  private boolean awaitTermination(ExecutorService executor) {
    boolean interrupted = false;
    long started = System.nanoTime();
    while (true) {
      try {
        if (executor.awaitTermination(STILL_WAITING_EVERY.toNanos(), TimeUnit.NANOSECONDS)) {
          return interrupted;
        }
        LOG.warn("The operator's reconciliations have not ended {} ms after it was stopped; still waiting, because "
            + "the Lease may be given up only once none runs (a reconciler that ignores interrupts keeps it from "
            + "ending)", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
  }

  @Override
  public String toString() {
    return "OperatorTerm{" + operator.getRegisteredControllersNumber() + " controller(s)}";
  }
}
