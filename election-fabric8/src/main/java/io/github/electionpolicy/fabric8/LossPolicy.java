package io.github.electionpolicy.fabric8;

import java.util.Objects;

/**
 * What the runner does after it lost leadership and its reconcilers stopped: exit the process (the safe
 * default in production, where Kubernetes restarts the pod), contend again, or call a custom handler.
 * Closing the runner is not a loss: it never triggers the policy.
 *
 * <p>A sealed set of records, one per alternative, each carrying exactly what it needs; {@link #kind()} is
 * for Java 17 callers that switch.
 *
 * <pre>{@code
 * LossPolicy production = LossPolicy.exit();             // stop reconcilers, then System.exit(1)
 * LossPolicy inTests = LossPolicy.exit(status -> exits.add(status));
 * LossPolicy longLived = LossPolicy.recontend();
 *
 * switch (policy.kind()) {
 *   case EXIT -> log.info("exits through {}", ((LossPolicy.Exit) policy).exiter());
 *   case RECONTEND -> log.info("contends again");
 *   case CUSTOM -> log.info("asks {}", ((LossPolicy.Custom) policy).handler());
 * }
 * }</pre>
 *
 * <p>All implementations are immutable records and thread-safe (as thread-safe as the exiter or handler they
 * hold, which must be).
 */
public sealed interface LossPolicy permits LossPolicy.Exit, LossPolicy.Recontend, LossPolicy.Custom {

  /** The exit status {@link #exit()} uses. */
  int LOSS_EXIT_STATUS = 1;

  /** The kinds of policy, for Java 17 callers that switch; an enum, so thread-safe. */
  enum Kind {
    /** Stop the reconcilers, then exit with {@link #LOSS_EXIT_STATUS} through an {@link Exiter}. */
    EXIT,
    /** Stop the reconcilers, then contend again with a fresh attempt. */
    RECONTEND,
    /** Stop the reconcilers, then ask a {@link LossHandler}. */
    CUSTOM
  }

  /**
   * The kind of this policy.
   *
   * @return exit, recontend or custom
   */
  Kind kind();

  /**
   * Stop the reconcilers, then exit the process with status {@value #LOSS_EXIT_STATUS} through
   * {@link Exiter#system()}. The default.
   *
   * @return the exit policy, equal to every other {@code exit()}
   */
  static LossPolicy exit() {
    return new Exit(Exiter.system());
  }

  /**
   * Stop the reconcilers, then call {@code exiter} once with status {@value #LOSS_EXIT_STATUS}; the runner
   * then stops contending.
   *
   * @param exiter what ends the process, e.g. a test double
   * @return the exit policy with that exiter
   * @throws NullPointerException if {@code exiter} is {@code null}
   */
  static LossPolicy exit(Exiter exiter) {
    return new Exit(exiter);
  }

  /**
   * Stop the reconcilers, then contend again; the reconcilers start again with a new term if this replica
   * wins again, once every reconciler's {@code stop()} has returned (with no timeout: while one hangs the runner
   * does not contend, and its liveness turns false once the health budget passed, so the kubelet restarts the
   * pod). If a {@code stop()} threw, its work may still run, so the runner does not contend again: it stops
   * (state {@code STOPPED}) and the process should be restarted.
   *
   * @return the recontend policy, equal to every other {@code recontend()}
   */
  static LossPolicy recontend() {
    return new Recontend();
  }

  /**
   * Stop the reconcilers, then let {@code handler} decide whether to contend again.
   *
   * @param handler the reaction to a loss
   * @return the custom policy
   * @throws NullPointerException if {@code handler} is {@code null}
   */
  static LossPolicy custom(LossHandler handler) {
    return new Custom(handler);
  }

  /**
   * Stop the reconcilers, then call the exiter once with {@link #LOSS_EXIT_STATUS} and stop contending.
   * Immutable and thread-safe.
   *
   * <pre>{@code
   * LossPolicy policy = new LossPolicy.Exit(status -> exits.add(status));
   * }</pre>
   *
   * @param exiter what ends the process; {@link Exiter#system()} for {@link LossPolicy#exit()}
   */
  record Exit(Exiter exiter) implements LossPolicy {
    /**
     * Checks the exiter is present.
     *
     * @param exiter what ends the process
     * @throws NullPointerException if {@code exiter} is {@code null}
     */
    public Exit {
      Objects.requireNonNull(exiter, "exiter");
    }

    @Override
    public Kind kind() {
      return Kind.EXIT;
    }

    // The runner logs the policy as its kind: "on loss EXIT".
    @Override
    public String toString() {
      return kind().name();
    }
  }

  /**
   * Stop the reconcilers, waiting at most {@link LeaseSettings#stopTimeout()}, then contend again; a stop that
   * threw or outlived that timeout ends contention instead ({@code STOPPED}, cause
   * {@link ElectionState.StopCause#LOST LOST}). Immutable and thread-safe.
   *
   * <pre>{@code
   * LossPolicy policy = new LossPolicy.Recontend();   // the same as LossPolicy.recontend()
   * }</pre>
   */
  record Recontend() implements LossPolicy {
    @Override
    public Kind kind() {
      return Kind.RECONTEND;
    }

    // The runner logs the policy as its kind: "on loss RECONTEND".
    @Override
    public String toString() {
      return kind().name();
    }
  }

  /**
   * Stop the reconcilers, then ask the handler whether to contend again. Immutable and thread-safe.
   *
   * <pre>{@code
   * LossPolicy policy = new LossPolicy.Custom(lostTerm -> LossHandler.AfterLoss.STOP);
   * }</pre>
   *
   * @param handler the reaction to a loss
   */
  record Custom(LossHandler handler) implements LossPolicy {
    /**
     * Checks the handler is present.
     *
     * @param handler the reaction to a loss
     * @throws NullPointerException if {@code handler} is {@code null}
     */
    public Custom {
      Objects.requireNonNull(handler, "handler");
    }

    @Override
    public Kind kind() {
      return Kind.CUSTOM;
    }

    // The runner logs the policy as its kind: "on loss CUSTOM".
    @Override
    public String toString() {
      return kind().name();
    }
  }
}
