package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out the {@link LossPolicy} after a loss (or a failed start), on the election thread: always stop
 * the reconcilers first, then exit (at most once), contend again, or ask the custom handler. A stop that
 * failed does not change the policy (the Lease is already given up); a reconciler that threw a
 * {@link VirtualMachineError} does: the runner then stops for good, exiting first under {@code EXIT}.
 */
final class LossReaction {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  private final LossPolicy policy;
  private final ServiceControl control;
  private final Duration stopTimeout;
  private final BooleanSupplier closing;
  private final Runnable stopForGood;
  private final String lease;
  private final AtomicBoolean exited = new AtomicBoolean();

  /**
   * @param closing true once the runner is closing; ends waits for reconcilers that will not stop
   * @param stopForGood moves the runner to STOPPED when it will not contend again
   * @param lease the Lease, as {@code namespace/name}, for logs
   */
  LossReaction(LossPolicy policy, ServiceControl control, Duration stopTimeout, BooleanSupplier closing,
      Runnable stopForGood, String lease) {
    this.policy = Objects.requireNonNull(policy, "policy");
    this.control = control;
    this.stopTimeout = stopTimeout;
    this.closing = closing;
    this.stopForGood = stopForGood;
    this.lease = lease;
  }

  LossHandler.AfterLoss react(LeadershipTerm lostTerm) {
    switch (policy.kind()) {
      case EXIT:
        return exit();
      case RECONTEND:
        // Contending again while old reconcilers still run could make two runs overlap: wait them out. A stop
        // that threw may have left its work running (LeaderService.stop), so it ends contention as a hung one does.
        if (!control.stopAndWaitUntilStoppedOr(closing).clean()) {
          LOG.error("A reconciler did not stop cleanly after the loss of Lease {}: not contending again, since its "
              + "work may still run; restart the process", lease);
          stopForGood.run();
          return LossHandler.AfterLoss.STOP;
        }
        return control.hadFatalFailure() ? stopAfterFatalFailure() : LossHandler.AfterLoss.RECONTEND;
      case CUSTOM:
        return custom(((LossPolicy.Custom) policy).handler(), lostTerm);
      default:
        throw new IllegalStateException("unknown loss policy " + policy);
    }
  }

  /**
   * After the election loop itself failed: it cannot contend again, so stop the reconcilers, exit under
   * {@link LossPolicy.Kind#EXIT EXIT}, and stop for good under any policy.
   */
  void loopDied() {
    if (policy.kind() == LossPolicy.Kind.EXIT) {
      exit();
      return;
    }
    control.stopAndWaitUntilStoppedOr(closing);
    stopForGood.run();
  }

  /**
   * The runner failed to start (the RBAC preflight found a missing verb) and will never contend: no
   * reconciler ran and no Lease was written. Under {@link LossPolicy.Kind#EXIT EXIT} the process exits, so
   * the pod restarts (and shows the failure) as it would after a loss; under any other policy the runner
   * stops, with no loss handler called: there is no term to hand it.
   */
  void startFailed() {
    if (policy instanceof LossPolicy.Exit exit) {
      exitOnce(exit, "Not contending for Lease");
    }
    stopForGood.run();
  }

  /** Calls the exiter, at most once per runner whatever calls this. */
  private void exitOnce(LossPolicy.Exit exit, String what) {
    if (exited.compareAndSet(false, true)) {
      LOG.error("{} {}; exiting with status {} (loss policy EXIT)", what, lease, LossPolicy.LOSS_EXIT_STATUS);
      try {
        exit.exiter().exit(LossPolicy.LOSS_EXIT_STATUS);
      } catch (RuntimeException e) {
        LOG.error("Exiter failed", e);
      }
    }
  }

  /**
   * A reconciler threw a {@link VirtualMachineError}: the JVM may be broken, so no user code runs any more
   * (no loss handler, no new term); only {@code EXIT} still ends the process.
   */
  private LossHandler.AfterLoss stopAfterFatalFailure() {
    LOG.error("A reconciler threw a VirtualMachineError: not contending again for Lease {}; restart the "
        + "process", lease);
    stopForGood.run();
    return LossHandler.AfterLoss.STOP;
  }

  private LossHandler.AfterLoss exit() {
    ServiceControl.StopResult stop = control.stopAndWait(stopTimeout);
    if (stop == ServiceControl.StopResult.NOT_FINISHED) {
      LOG.warn("Reconcilers did not stop within {}; exiting anyway", Durations.format(stopTimeout));
    } else if (stop == ServiceControl.StopResult.FAILED) {
      LOG.warn("A reconciler failed to stop; exiting anyway");
    }
    // Exit before reporting STOPPED: a main that returns from awaitStopped() must not end the JVM with
    // status 0 ahead of the exit.
    exitOnce((LossPolicy.Exit) policy, "Lost leadership of Lease");
    stopForGood.run();
    return LossHandler.AfterLoss.STOP;
  }

  private LossHandler.AfterLoss custom(LossHandler handler, LeadershipTerm lostTerm) {
    if (control.stopAndWaitUntilStoppedOr(closing) == ServiceControl.StopResult.NOT_FINISHED) {
      return LossHandler.AfterLoss.STOP;
    }
    if (control.hadFatalFailure()) {
      return stopAfterFatalFailure();
    }
    LossHandler.AfterLoss next;
    try {
      next = Objects.requireNonNull(handler.onLoss(lostTerm), "LossHandler returned null");
    } catch (RuntimeException e) {
      LOG.error("Loss handler failed; stopping contention for Lease {}", lease, e);
      next = LossHandler.AfterLoss.STOP;
    }
    if (next == LossHandler.AfterLoss.STOP) {
      stopForGood.run();
    }
    return next;
  }
}
