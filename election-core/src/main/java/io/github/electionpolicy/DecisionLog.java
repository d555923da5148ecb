package io.github.electionpolicy;

import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs an {@link ElectionDecision} through the SLF4J API: one line with the {@linkplain
 * ElectionDecision#summary() summary}, then one line per {@linkplain ElectionDecision#warnings() warning}.
 *
 * <p>The summary is logged at INFO when the process contends or runs unelected outside a pod, and at WARN
 * when the kill switch turned election off, because that is only safe with one replica. Warnings are
 * logged at WARN. The library ships no SLF4J binding; the application chooses one.
 *
 * <p>Stateless and thread-safe.
 */
public final class DecisionLog {

  /** The logger used by {@link #log(ElectionDecision)}: {@value}. */
  public static final String LOGGER_NAME = "io.github.electionpolicy.ElectionDecision";

  private DecisionLog() {}

  /**
   * Logs a decision to the logger named {@value #LOGGER_NAME}.
   *
   * @param decision the decision to log
   */
  public static void log(ElectionDecision decision) {
    log(decision, LoggerFactory.getLogger(LOGGER_NAME));
  }

  /**
   * Logs a decision to the given logger.
   *
   * @param decision the decision to log
   * @param logger where to log it
   */
  public static void log(ElectionDecision decision, Logger logger) {
    Objects.requireNonNull(decision, "decision");
    Objects.requireNonNull(logger, "logger");
    if (decision.reasons().contains(ElectionDecision.Reason.KILL_SWITCH_OFF)) {
      logger.warn("{} reasons={}", decision.summary(), decision.reasons());
    } else {
      logger.info("{} reasons={}", decision.summary(), decision.reasons());
    }
    for (String warning : decision.warnings()) {
      logger.warn(warning);
    }
  }
}
