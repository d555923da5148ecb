package io.github.electionpolicy.fabric8;

import java.util.Objects;

/**
 * What the runner does after it lost leadership and its reconcilers stopped: exit the process (the safe
 * default in production, where Kubernetes restarts the pod), contend again, or call a custom handler.
 * Closing the runner is not a loss: it never triggers the policy.
 *
 * <pre>{@code
 * LossPolicy production = LossPolicy.exit();             // stop reconcilers, then System.exit(1)
 * LossPolicy inTests = LossPolicy.exit(status -> exits.add(status));
 * LossPolicy longLived = LossPolicy.recontend();
 * }</pre>
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class LossPolicy {

  /** The exit status {@link #exit()} uses. */
  public static final int LOSS_EXIT_STATUS = 1;

  /** The kinds of policy, for callers that switch on them; an enum, so thread-safe. */
  public enum Kind {
    /** Stop the reconcilers, then exit with {@link #LOSS_EXIT_STATUS} through an {@link Exiter}. */
    EXIT,
    /** Stop the reconcilers, then contend again with a fresh attempt. */
    RECONTEND,
    /** Stop the reconcilers, then ask a {@link LossHandler}. */
    CUSTOM
  }

  private static final LossPolicy EXIT = new LossPolicy(Kind.EXIT, Exiter.system(), null);
  private static final LossPolicy RECONTEND = new LossPolicy(Kind.RECONTEND, null, null);

  private final Kind kind;
  private final Exiter exiter;
  private final LossHandler handler;

  private LossPolicy(Kind kind, Exiter exiter, LossHandler handler) {
    this.kind = kind;
    this.exiter = exiter;
    this.handler = handler;
  }

  /**
   * Stop the reconcilers, then exit the process with status {@value #LOSS_EXIT_STATUS} through
   * {@link Exiter#system()}. The default.
   *
   * @return the exit policy
   */
  public static LossPolicy exit() {
    return EXIT;
  }

  /**
   * Stop the reconcilers, then call {@code exiter} once with status {@value #LOSS_EXIT_STATUS}; the runner
   * then stops contending.
   *
   * @param exiter what ends the process, e.g. a test double
   * @return the exit policy with that exiter
   */
  public static LossPolicy exit(Exiter exiter) {
    return new LossPolicy(Kind.EXIT, Objects.requireNonNull(exiter, "exiter"), null);
  }

  /**
   * Stop the reconcilers, then contend again; the reconcilers start again with a new term if this replica
   * wins again.
   *
   * @return the recontend policy
   */
  public static LossPolicy recontend() {
    return RECONTEND;
  }

  /**
   * Stop the reconcilers, then let {@code handler} decide whether to contend again.
   *
   * @param handler the reaction to a loss
   * @return the custom policy
   */
  public static LossPolicy custom(LossHandler handler) {
    return new LossPolicy(Kind.CUSTOM, null, Objects.requireNonNull(handler, "handler"));
  }

  /**
   * The kind of this policy.
   *
   * @return exit, recontend or custom
   */
  public Kind kind() {
    return kind;
  }

  Exiter exiter() {
    return exiter;
  }

  LossHandler handler() {
    return handler;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof LossPolicy && ((LossPolicy) other).kind == kind
        && Objects.equals(((LossPolicy) other).exiter, exiter)
        && Objects.equals(((LossPolicy) other).handler, handler);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, exiter, handler);
  }

  @Override
  public String toString() {
    return kind.name();
  }
}
