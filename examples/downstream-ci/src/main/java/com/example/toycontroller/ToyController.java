package com.example.toycontroller;

import io.github.electionpolicy.DecisionLog;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import java.util.Objects;

/**
 * A toy controller whose start-up path decides, logs the decision, and then either contends for the leader
 * Lease (and starts its reconcilers only once leading) or starts its reconcilers at once.
 *
 * <p>The Lease and the reconcilers are ports, so that a test can run the real start-up path and watch what it
 * did. Not thread-safe: start it once.
 */
public final class ToyController {

  /** The substrate this controller runs its work on: it creates Kubernetes Jobs. */
  public static final Substrate SUBSTRATE = Substrate.usingKubernetesApi("kubernetes-jobs");

  /** Contends for the leader Lease; in production, a Lease-based leader elector. */
  @FunctionalInterface
  public interface LeaderElector {
    /**
     * Starts contending; calls {@code onStartedLeading} once this process holds the Lease.
     *
     * @param onStartedLeading what to run when leading
     */
    void contend(Runnable onStartedLeading);
  }

  /** The controller's reconcilers. */
  @FunctionalInterface
  public interface Reconcilers {
    /** Starts reconciling. */
    void start();
  }

  private final ElectionPolicy policy;
  private final LeaderElector elector;
  private final Reconcilers reconcilers;

  /**
   * Creates the controller.
   *
   * @param policy the election policy
   * @param elector contends for the Lease
   * @param reconcilers the reconcilers to start
   */
  public ToyController(ElectionPolicy policy, LeaderElector elector, Reconcilers reconcilers) {
    this.policy = Objects.requireNonNull(policy, "policy");
    this.elector = Objects.requireNonNull(elector, "elector");
    this.reconcilers = Objects.requireNonNull(reconcilers, "reconcilers");
  }

  /**
   * The start-up path: decide, log, then contend or run unelected. An invalid kill switch throws before
   * anything starts.
   *
   * @param environment where to read the kill switch and the pod variables
   * @param substrate what the controller runs its work on
   * @return the decision it acted on
   */
  public ElectionDecision start(Environment environment, Substrate substrate) {
    ElectionDecision decision = policy.decide(environment, substrate);
    DecisionLog.log(decision);
    switch (decision.outcome()) {
      case CONTEND -> elector.contend(reconcilers::start);
      case RUN_UNELECTED -> reconcilers.start();
    }
    return decision;
  }

  /**
   * Starts the toy controller for this process's environment. The ports only print, since the toy has no
   * cluster to talk to.
   *
   * @param args ignored
   */
  public static void main(String[] args) {
    ToyController controller = new ToyController(
        ElectionPolicy.defaults(),
        onStartedLeading -> System.out.println("toy-controller: contending for the leader Lease"),
        () -> System.out.println("toy-controller: reconcilers started"));
    controller.start(Environment.system(), SUBSTRATE);
  }
}
