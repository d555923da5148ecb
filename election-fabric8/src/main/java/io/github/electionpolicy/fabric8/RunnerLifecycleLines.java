package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.RunnerLifecycleCommand.Level;
import io.github.electionpolicy.fabric8.RunnerLifecycleCommand.Log;

/**
 * The wording of {@link RunnerLifecycle}'s log lines, as {@link LeaseLog} words {@link LeaseProtocol}'s facts: the
 * lifecycle decides when a line is due, this says it. Pure: each method returns the {@link Log} command.
 */
final class RunnerLifecycleLines {

  private final RunnerLifecycleConfig config;

  RunnerLifecycleLines(RunnerLifecycleConfig config) {
    this.config = config;
  }

  /** What a stop that failed or outlived its deadline did, as the start of a sentence. */
  String stopFailed(boolean timedOut) {
    return timedOut ? "Services did not stop within " + config.stopTimeout() : "A service failed to stop";
  }

  Log accessDenied(LeaseAccessDeniedException denied) {
    return error("Not contending for Lease " + config.lease() + ": " + denied.getMessage());
  }

  Log failedStartNotReleased(boolean fatal, boolean timedOut) {
    return error("After the failed start, " + (fatal ? "a VirtualMachineError was thrown"
        : timedOut ? "a service did not stop within " + config.stopTimeout() : "a service failed to stop")
        + ": giving up the term without releasing Lease " + config.lease()
        + "; another replica takes over once it expires");
  }

  Log closeUnclean(boolean timedOut) {
    return config.contends()
        ? error(stopFailed(timedOut) + "; leaving the Lease to expire instead of releasing it (Lease "
            + config.lease() + ")")
        : error(stopFailed(timedOut) + " (" + config.lease() + ")");
  }

  Log startFailedUnclean(boolean timedOut) {
    return error(stopFailed(timedOut) + " after a service failed to start (" + config.lease() + ")");
  }

  Log electionFailedUnclean(boolean timedOut) {
    return error(stopFailed(timedOut) + " after the election for Lease " + config.lease() + " failed");
  }

  Log exitingUnclean(boolean timedOut) {
    return new Log(Level.WARN, stopFailed(timedOut) + " after the loss of Lease " + config.lease()
        + "; exiting anyway");
  }

  Log lossUnclean(boolean timedOut) {
    return error((timedOut ? "A service did not stop within " + config.stopTimeout()
        : "A service did not stop cleanly") + " after the loss of Lease " + config.lease()
        + ": not contending again, since its work may still run; restart the process");
  }

  Log lossFatal() {
    return error("A service threw a VirtualMachineError: not contending again for Lease " + config.lease()
        + "; restart the process");
  }

  Log handlerAskedAfterUncleanLoss() {
    return error("The loss handler asked to contend again, but a service did not stop cleanly after the loss of "
        + "Lease " + config.lease() + ": not contending again, since its work may still run; restart the process");
  }

  Log electionFailed(Throwable cause) {
    return error("The election for Lease " + config.lease() + " failed; not contending any more: " + cause);
  }

  private static Log error(String message) {
    return new Log(Level.ERROR, message);
  }
}
