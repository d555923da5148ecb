package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import java.time.Duration;

/**
 * The delete of a membership Lease that a clean close has just released, for its {@link LeaseElector}: a replica's
 * Lease should not outlive it (every restart has a new identity). The delete is conditional on the released record
 * (its resourceVersion and uid, see {@link LeaseTransport#delete}), so that a Lease anyone wrote since stays, and
 * bounded by one request timeout, as the release was. A 409 (written since) or a 404 (gone) is an answer, logged at
 * DEBUG; a 403 the RBAC preflight warned of already, at INFO; any other failure is logged once at WARN. Either way the close goes on: {@code done} runs once, on the loop.
 *
 * <p>Not thread-safe: every method runs on the runner's loop. Its lines are the elector's (same logger).
 */
final class ReleasedLeaseDelete {

  private final LeaseTransport transport;
  private final ElectorSignals events;
  private final String lease;
  private final long requestTimeoutNanos;
  private final RunnerLog log;
  private LeaseTransport.Call request;
  private RunnerLoop.Timer timer;
  private Runnable done;

  ReleasedLeaseDelete(LeaseTransport transport, ElectorSignals events, String lease, long requestTimeoutNanos,
      RunnerLog.Lane logLane) {
    this.transport = transport;
    this.events = events;
    this.lease = lease;
    this.requestTimeoutNanos = requestTimeoutNanos;
    this.log = new RunnerLog(LeaseElector.class, logLane);
  }

  /** Sends the delete of {@code released}; {@code done} runs on the loop once it is answered or timed out. */
  void start(LeaseRecord released, Runnable done) {
    this.done = done;
    LeaseTransport.Answered answered = (answer, failure) -> events.onLoop(() -> answered(answer, failure));
    request = transport.delete(released, answered);
    if (this.done == null) {
      return; // answered at once, on this very call
    }
    timer = events.onLoopAfter(requestTimeoutNanos, () -> answered(LeaseHttp.failed(new LeaseCallFailed(
        "delete Lease got no answer within " + Durations.approx(Duration.ofNanos(requestTimeoutNanos)), null, 0)),
        null));
  }

  /** Gives the delete up without calling {@code done} (the elector ended another way). */
  void cancel() {
    done = null;
    stopWaiting();
  }

  private void answered(Answer answer, Throwable failure) {
    Runnable then = done;
    if (then == null) {
      return; // timed out already, or cancelled
    }
    done = null;
    stopWaiting();
    if (answer instanceof Answer.Failed failed) {
      if (failed.kind() == LeaseStep.FailureKind.CONFLICT || failed.kind() == LeaseStep.FailureKind.NOT_FOUND) {
        log.debug("Lease {} not deleted after its release ({}): written since, or gone", lease, failed.failure());
      } else if (failure instanceof LeaseCallFailed refused && refused.code() == LeaseCallFailed.FORBIDDEN
          && transport.warnedDenied("delete")) {
        // The preflight warned of this at start, with the rule to add: once is enough.
        log.info("Lease {} was released and stays, not deleted ({}), as the RBAC preflight warned", lease,
            failed.failure());
      } else {
        log.warn("Lease {} was released but could not be deleted ({}); it stays, released, until deleted by "
            + "hand. Deleting it needs the \"delete\" verb on coordination.k8s.io leases", lease, failed.failure());
      }
    } else {
      log.debug("Lease {} deleted after its release", lease);
    }
    then.run();
  }

  private void stopWaiting() {
    if (timer != null) {
      timer.cancel();
      timer = null;
    }
    if (request != null) {
      request.cancel();
      request = null;
    }
  }
}
