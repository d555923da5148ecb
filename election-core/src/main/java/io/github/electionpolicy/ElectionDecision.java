package io.github.electionpolicy;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Whether a controller process contends for its leader Lease, why, and from which inputs.
 *
 * <p>A decision is one of two immutable records: {@link Contend} or {@link RunUnelected}. Both carry the
 * three inputs the decision was made from; everything else ({@link #reasons()}, {@link #warnings()},
 * {@link #summary()}) is derived from them, so two decisions are equal exactly when their inputs are.
 * Java 17 callers switch on {@link #outcome()}:
 *
 * <pre>{@code
 * ElectionDecision decision = ElectionPolicy.defaults().decide(Environment.system(), substrate);
 * DecisionLog.log(decision);
 * switch (decision.outcome()) {
 *   case CONTEND -> elector.start();
 *   case RUN_UNELECTED -> reconcilers.start();
 * }
 * }</pre>
 *
 * <p>The rule, in full: a kill switch that turns election off wins ({@link Reason#KILL_SWITCH_OFF});
 * otherwise the process contends when it runs in a pod ({@link Reason#IN_KUBERNETES_POD}) or its substrate
 * uses the Kubernetes API ({@link Reason#SUBSTRATE_USES_KUBERNETES_API}), with every reason that holds;
 * otherwise it runs unelected ({@link Reason#OUTSIDE_POD_WITHOUT_KUBERNETES_API}).
 *
 * <p>A decision never logs; {@link DecisionLog} does that when asked. Instances are thread-safe.
 */
public sealed interface ElectionDecision permits ElectionDecision.Contend, ElectionDecision.RunUnelected {

  /** What the process does. */
  enum Outcome {
    /** Contend for the leader Lease and run the reconcilers only while leading. */
    CONTEND,
    /** Run the reconcilers at once, without leader election. Safe only with a single replica. */
    RUN_UNELECTED
  }

  /** Why the process does it: stable codes for metrics, tests and alerts. */
  enum Reason {
    /** The kill switch turned election off; this overrides every other input. */
    KILL_SWITCH_OFF,
    /** Election is on, the process runs outside a pod and its substrate does not use the Kubernetes API. */
    OUTSIDE_POD_WITHOUT_KUBERNETES_API,
    /** Election is on and the process runs in a Kubernetes pod. */
    IN_KUBERNETES_POD,
    /** Election is on and the process's substrate uses the Kubernetes API. */
    SUBSTRATE_USES_KUBERNETES_API
  }

  /**
   * Applies the decision rule to typed inputs. {@link ElectionPolicy#decide(Environment, Substrate)} reads
   * the inputs from an environment and then calls this.
   *
   * @param killSwitch the kill switch as read
   * @param processHost the process host as detected
   * @param substrate the substrate the controller runs its work on
   * @return {@link Contend} or {@link RunUnelected}, following the rule in the class documentation
   */
  static ElectionDecision of(KillSwitch killSwitch, ProcessHost processHost, Substrate substrate) {
    Objects.requireNonNull(killSwitch, "killSwitch");
    Objects.requireNonNull(processHost, "processHost");
    Objects.requireNonNull(substrate, "substrate");
    return DecisionRule.outcome(killSwitch, processHost, substrate) == Outcome.CONTEND
        ? new Contend(killSwitch, processHost, substrate)
        : new RunUnelected(killSwitch, processHost, substrate);
  }

  /**
   * Returns what the process does.
   *
   * @return {@link Outcome#CONTEND} for {@link Contend}, {@link Outcome#RUN_UNELECTED} for {@link
   *     RunUnelected}
   */
  Outcome outcome();

  /**
   * Returns the kill switch the decision was made from.
   *
   * @return the kill switch, with its variable name and value as given
   */
  KillSwitch killSwitch();

  /**
   * Returns the process host the decision was made from.
   *
   * @return the process host, with the service variables as given
   */
  ProcessHost processHost();

  /**
   * Returns the substrate the decision was made from.
   *
   * @return the substrate
   */
  Substrate substrate();

  /**
   * Returns every reason that holds for the outcome. For {@link Contend}: {@link Reason#IN_KUBERNETES_POD},
   * {@link Reason#SUBSTRATE_USES_KUBERNETES_API} or both; for {@link RunUnelected}: exactly one of {@link
   * Reason#KILL_SWITCH_OFF} and {@link Reason#OUTSIDE_POD_WITHOUT_KUBERNETES_API}.
   *
   * @return an unmodifiable, non-empty set, iterated in the order of {@link Reason}
   */
  default Set<Reason> reasons() {
    return DecisionRule.reasons(killSwitch(), processHost(), substrate());
  }

  /**
   * Returns the warnings about the inputs, such as a half-set pod environment.
   *
   * @return an unmodifiable list of one-sentence warnings, empty when there is nothing to warn about
   */
  default List<String> warnings() {
    return processHost().warnings();
  }

  /**
   * Returns one line for the log that names the outcome and every reason in words a person on call
   * understands, including the kill-switch variable and the substrate by name.
   *
   * @return a single line without line breaks
   */
  default String summary() {
    return DecisionRule.summary(this);
  }

  /**
   * Tells whether the process contends for the Lease.
   *
   * @return {@code true} when {@link #outcome()} is {@link Outcome#CONTEND}
   */
  default boolean contends() {
    return outcome() == Outcome.CONTEND;
  }

  /**
   * The process contends for the leader Lease: election is on and it runs in a pod, or its substrate uses
   * the Kubernetes API.
   *
   * @param killSwitch the kill switch; must leave election on
   * @param processHost the process host
   * @param substrate the substrate; if the host is not a pod, it must use the Kubernetes API
   */
  record Contend(KillSwitch killSwitch, ProcessHost processHost, Substrate substrate)
      implements ElectionDecision {

    /**
     * Checks that the inputs call for contention.
     *
     * @param killSwitch the kill switch
     * @param processHost the process host
     * @param substrate the substrate
     * @throws NullPointerException if an input is {@code null}
     * @throws IllegalArgumentException if the inputs do not lead to {@link Outcome#CONTEND}
     */
    public Contend {
      DecisionRule.requireOutcome(Outcome.CONTEND, killSwitch, processHost, substrate);
    }

    @Override
    public Outcome outcome() {
      return Outcome.CONTEND;
    }

    @Override
    public String toString() {
      return "ElectionDecision.Contend" + reasons() + ": " + summary();
    }
  }

  /**
   * The process runs its reconcilers without leader election: the kill switch turned election off, or it
   * runs outside a pod and its substrate does not use the Kubernetes API.
   *
   * @param killSwitch the kill switch
   * @param processHost the process host
   * @param substrate the substrate
   */
  record RunUnelected(KillSwitch killSwitch, ProcessHost processHost, Substrate substrate)
      implements ElectionDecision {

    /**
     * Checks that the inputs call for running unelected.
     *
     * @param killSwitch the kill switch
     * @param processHost the process host
     * @param substrate the substrate
     * @throws NullPointerException if an input is {@code null}
     * @throws IllegalArgumentException if the inputs do not lead to {@link Outcome#RUN_UNELECTED}
     */
    public RunUnelected {
      DecisionRule.requireOutcome(Outcome.RUN_UNELECTED, killSwitch, processHost, substrate);
    }

    @Override
    public Outcome outcome() {
      return Outcome.RUN_UNELECTED;
    }

    @Override
    public String toString() {
      return "ElectionDecision.RunUnelected" + reasons() + ": " + summary();
    }
  }
}
