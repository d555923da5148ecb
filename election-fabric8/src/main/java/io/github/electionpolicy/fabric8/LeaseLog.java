package io.github.electionpolicy.fabric8;

import java.time.Duration;

/**
 * The log lines of the Lease loop: one per signal of {@link LeaseProtocol} that deserves one, under
 * {@link LeaseElector}'s logger, written through the runner's {@link RunnerLog} (never on the loop itself).
 */
final class LeaseLog {

  private final RunnerLog log;
  private final String lease;
  private final String identity;
  private final LeaseSettings settings;

  LeaseLog(RunnerLog log, String lease, String identity, LeaseSettings settings) {
    this.log = log;
    this.lease = lease;
    this.identity = identity;
    this.settings = settings;
  }

  void signal(LeaseStep.Signal signal) {
    if (signal instanceof LeaseStep.Elected elected) {
      log.info("Acquired Lease {} as {} (previous holder: {}, transitions: {})", lease, identity,
          elected.previousHolder().orElse("none"), elected.record().transitions());
    } else if (signal instanceof LeaseStep.Lost lost) {
      lost(lost);
    } else if (signal instanceof LeaseStep.Fact fact) {
      fact(fact);
    }
  }

  private void lost(LeaseStep.Lost lost) {
    switch (lost.cause()) {
      case RENEW_DEADLINE:
        log.warn("Lost Lease {}: not renewed within the renew deadline of {}", lease,
            Durations.format(settings.renewDeadline()));
        break;
      case LATE_RENEWAL:
      case TERM_LAPSED:
        log.warn("Lost Lease {}: the renewal succeeded only after the renew deadline of {}", lease,
            Durations.format(settings.renewDeadline()));
        break;
      case DELETED:
        log.warn("Lost Lease {}: it was deleted", lease);
        break;
      case TAKEN:
        log.warn("Lost Lease {}: it is now held by {}", lease, lost.holder().orElse("nobody"));
        break;
      case SAME_IDENTITY:
        log.error("Lease {} was taken under this process's own identity {} by another term: another process "
            + "uses the same identity. Identities must be unique among replicas", lease, identity);
        break;
      case START_FAILED:
        log.warn("Gave up Lease {}: a reconciler could not start", lease);
        break;
      default:
        throw new IllegalStateException("unknown loss cause " + lost.cause());
    }
  }

  private void fact(LeaseStep.Fact fact) {
    switch (fact.kind()) {
      case UNREACHABLE:
        log.warn("Lease {}: {}; retrying every {}", lease, fact.detail(), Durations.format(settings.retryPeriod()));
        break;
      case STILL_UNREACHABLE:
        log.debug("Lease {}: {}", lease, fact.detail());
        break;
      case REACHABLE_AGAIN:
        log.info("Lease {} reachable again", lease);
        break;
      case RENEWAL_FAILED:
        log.warn("Lease {}: renewal failed ({}); retrying until the renew deadline of {}", lease, fact.detail(),
            Durations.format(settings.renewDeadline()));
        break;
      case SAME_IDENTITY_WAITING:
        log.error("Lease {} is held under this process's own identity {} by a term it did not write: another "
            + "process uses the same identity, or one with it stopped without releasing; waiting until the "
            + "Lease expires. Identities must be unique among replicas", lease, identity);
        break;
      case LONG_LEASE_DURATION:
        log.warn("Lease {} is held with a lease duration over an hour ({} seconds); a follower honours it and "
            + "waits that long after the holder's last renewal", lease, fact.detail());
        break;
      case TOKEN_EXHAUSTED:
        log.error("Lease {}: leaseTransitions reached {} (Integer.MAX_VALUE), so no new term can get a larger "
            + "fencing token; not taking the Lease. Fix: reset the fencing token in every store that checks it, "
            + "then delete the Lease (or set its leaseTransitions to 0): the replicas count on from there", lease,
            fact.detail());
        break;
      case TOKEN_RESET:
        log.warn("Lease {}: the exhausted fencing token was reset; the next term's leaseTransitions is {}", lease,
            fact.detail());
        break;
      case RELEASED:
        log.info("Released Lease {}", lease);
        break;
      case HANDED_OVER:
        log.info("Handed Lease {} over to {}", lease, fact.detail());
        break;
      case HANDED_OVER_HERE:
        log.info("Lease {} was handed over to {}: leading it (leaseTransitions {})", lease, identity, fact.detail());
        break;
      case HAND_OVER_DECLINED:
        log.info("Lease {} was handed over to {}, which does not take it: releasing it (leaseTransitions {})", lease,
            identity, fact.detail());
        break;
      case RELEASE_FAILED:
        log.warn("Could not release Lease {} ({}); another replica takes over once it expires", lease,
            fact.detail());
        break;
      case ABANDONED:
        log.warn("Leaving Lease {} to expire without releasing it", lease);
        break;
      case BACKING_OFF:
        log.warn("Lease {}: waiting {} before contending again, after a term given up", lease,
            Durations.format(Duration.ofMillis(Long.parseLong(fact.detail()))));
        break;
      case CONTENDING_AGAIN:
        log.info("Contending again for Lease {} as {}", lease, identity);
        break;
      default:
        throw new IllegalStateException("unknown fact " + fact.kind());
    }
  }

  void loopFailed(Throwable failure) {
    log.error("Lease loop for {} failed; contention ends", lease, failure);
  }
}
