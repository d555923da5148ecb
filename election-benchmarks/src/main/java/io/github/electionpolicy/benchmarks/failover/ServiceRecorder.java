package io.github.electionpolicy.benchmarks.failover;

/**
 * What a contender calls when its replica starts and stops running reconcilers; each call is one stamped
 * event in the shared {@link EventLog}. The benchmark's reconcilers do no work: the instant they start is
 * what is measured. Thread-safe.
 */
public final class ServiceRecorder {

  private final EventLog log;
  private final String identity;

  /**
   * Creates a recorder for one replica.
   *
   * @param log the shared log
   * @param identity the replica's identity
   */
  public ServiceRecorder(EventLog log, String identity) {
    this.log = log;
    this.identity = identity;
  }

  /** The replica started its reconcilers: it leads. */
  public void started() {
    log.record(EventKind.RECONCILERS_STARTED, identity, "");
  }

  /** The replica stopped its reconcilers. */
  public void stopped() {
    log.record(EventKind.RECONCILERS_STOPPED, identity, "");
  }
}
