package io.github.electionpolicy.josdk;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link ShardedOperator} and an {@link OperatorService} make of an {@link Error} (or any other {@link
 * Throwable} that is not an {@link Exception}) thrown by user code that JOSDK 5.3 runs for a reconciliation: the
 * reconciler's {@code reconcile}, a cleaner's {@code cleanup}, a context initializer's {@code initContext} and its
 * {@code updateErrorStatus} (through {@link GuardedReconciler}; in a {@code ShardedOperator}, {@link ShardGate} catches
 * around the whole of {@code reconcile} and {@code cleanup} too, and fails a reconciliation whose managed dependent
 * threw one on JOSDK's workflow executor). JOSDK catches exceptions only there: an {@code Error} would skip
 * its end of the reconciliation and leave the resource marked as being processed for as long as the operator runs,
 * which a warm operator does for the whole process (the resource would never be reconciled here again, whichever term
 * its shard moves back under), and a term's operator for the whole term, as long as the leader keeps its Lease.
 *
 * <p>Every such {@code Error} is logged at ERROR with the resource, and then becomes an {@link IllegalStateException}
 * that carries it: a failed reconciliation, which JOSDK retries as any. A {@link VirtualMachineError} included: a
 * {@link StackOverflowError} has unwound by the time it is caught, and for the others ({@link OutOfMemoryError}, {@link
 * InternalError}) rethrowing would not end the process either, only the reconciliation thread, while the runner keeps
 * the Leases for work nothing does any more; a process that must end on an {@code OutOfMemoryError} ends at
 * once with the JVM's {@code -XX:+ExitOnOutOfMemoryError} (docs/sharding.md).
 *
 * <p>What the user's {@code Metrics} throw from the callbacks around a reconciliation is logged and ignored ({@link
 * #metricsFailed}).
 */
final class UserErrors {

  private static final Logger LOG = LoggerFactory.getLogger(ShardedOperator.class);

  private UserErrors() {}

  /**
   * Logs {@code thrown} at ERROR with the resource, and returns the exception to throw instead.
   *
   * @param what the user code that threw, as the message names it ({@code "the reconciler's reconcile"})
   * @param resource the resource of the reconciliation, as the message names it
   * @param thrown what the user code threw: not an {@link Exception}
   * @return an {@link IllegalStateException} whose cause is {@code thrown}
   */
  static IllegalStateException failed(String what, Object resource, Throwable thrown) {
    String described;
    try {
      described = String.valueOf(thrown);
    } catch (Throwable unprintable) { // its getMessage or toString threw: the failure must still reach JOSDK
      described = thrown.getClass().getName() + " (whose message could not be made)";
    }
    IllegalStateException failed = new IllegalStateException(what + " of " + resource + " threw " + described
        + ": the reconciliation fails, and JOSDK retries it as any failed one", thrown);
    try {
      LOG.error("{}{} of {} threw an Error; the reconciliation fails as if it had thrown an exception, and JOSDK "
          + "retries it{}", what.substring(0, 1).toUpperCase(java.util.Locale.ROOT), what.substring(1), resource,
          thrown instanceof VirtualMachineError
              ? " (a VirtualMachineError: the JVM may be in trouble; run it with -XX:+ExitOnOutOfMemoryError for an "
                  + "OutOfMemoryError to end the process)"
              : "", thrown);
    } catch (Throwable logging) { // an appender out of memory: the failure still reaches JOSDK
      try {
        failed.addSuppressed(logging);
      } catch (Throwable ignored) {
        // nothing left to record it with
      }
    }
    return failed;
  }

  /**
   * Logs at ERROR that a callback of the user's {@code Metrics} threw {@code thrown}, which then goes no further: JOSDK
   * 5.3 catches nothing around those callbacks, and a throw there would skip its bookkeeping of the reconciliation
   * (a throw from {@code reconciliationSubmitted} or {@code reconciliationStarted} leaves the resource marked as being
   * processed for the operator's life). Never throws.
   *
   * @param callback the {@code Metrics} method that threw
   * @param resource the resource (or its {@code ResourceID}) the callback was called for; may be null
   * @param thrown what the callback threw: an exception or an {@link Error}
   */
  static void metricsFailed(String callback, Object resource, Throwable thrown) {
    try {
      Object named = resource instanceof io.fabric8.kubernetes.api.model.HasMetadata metadata
          ? io.javaoperatorsdk.operator.processing.event.ResourceID.fromResource(metadata) : resource;
      LOG.error("The Metrics' {} threw for {}; ignored, so that JOSDK's bookkeeping of the reconciliation goes on",
          callback, named, thrown);
    } catch (Throwable logging) {
      // a resource without metadata, an appender out of memory: the reconciliation goes on all the same
    }
  }
}
