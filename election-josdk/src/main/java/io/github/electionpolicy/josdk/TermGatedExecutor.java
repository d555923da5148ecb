package io.github.electionpolicy.josdk;

import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor a term's operator reconciles on: JOSDK's, whose tasks each first ask whether the term is still
 * valid and do nothing once it is not. So no reconciliation begins after the term ended, even before the runner
 * has stopped the operator (the end is seen on this process's monotonic clock, at the renew deadline at the
 * latest); one that began before is waited for by the stop, and its writes are refused by the write gate.
 *
 * <p>A skipped task leaves JOSDK believing the resource is still being reconciled; that is harmless, since the
 * operator of an ended term is about to be stopped and is never started again. Thread-safe, as the executor it
 * wraps.
 */
final class TermGatedExecutor extends WrappingExecutor {

  private static final Logger LOG = LoggerFactory.getLogger(OperatorService.class);

  private final BooleanSupplier termValid;
  private final AtomicLong skipped = new AtomicLong();

  TermGatedExecutor(ExecutorService delegate, BooleanSupplier termValid) {
    super(delegate);
    this.termValid = Objects.requireNonNull(termValid, "termValid");
  }

  @Override
  Runnable wrap(Runnable task) {
    return () -> {
      if (termValid.getAsBoolean()) {
        task.run();
      } else if (skipped.incrementAndGet() == 1) {
        LOG.info("The term ended: the operator starts no further reconciliation until it is stopped");
      }
    };
  }

  /** How many tasks were not run because the term had ended. */
  long skipped() {
    return skipped.get();
  }
}
