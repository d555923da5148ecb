package io.github.electionpolicy.fabric8;

/**
 * A custom reaction to a lost leadership, for {@link LossPolicy#custom(LossHandler)}. The runner calls it
 * after the services have stopped, on the services' callback thread ({@code election-services[lease:identity]}),
 * and contends again or stops as it answers.
 *
 * <pre>{@code
 * LossPolicy policy = LossPolicy.custom(lostTerm -> {
 *   lossCounter.increment();
 *   return lossCounter.count() < 3 ? LossHandler.AfterLoss.RECONTEND : LossHandler.AfterLoss.STOP;
 * });
 * }</pre>
 *
 * <p>Implementations must be thread-safe and should return quickly.
 */
@FunctionalInterface
public interface LossHandler {

  /** What the runner does once the handler has returned; an enum, so thread-safe. */
  enum AfterLoss {
    /** Contend again with a fresh attempt, as {@link LossPolicy#recontend()} does. */
    RECONTEND,
    /** Stop contending: the runner's state becomes {@link ElectionState.Kind#STOPPED}. */
    STOP
  }

  /**
   * Reacts to the loss of a term.
   *
   * @param lostTerm the term that ended; {@link LeadershipTerm#isValid()} is already false
   * @return whether to contend again or stop
   */
  AfterLoss onLoss(LeadershipTerm lostTerm);
}
