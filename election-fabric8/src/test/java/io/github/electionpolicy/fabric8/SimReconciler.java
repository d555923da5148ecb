package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.SimSchedule.Trouble;

/**
 * A reconciler of a simulated replica. It does no work itself: the replica's write gate does (see
 * {@link SimReplica}). It misbehaves as the schedule says (throws from start or stop, or hangs in stop), may
 * close the runner from inside its callback, and reports how long each stop took, because the simulation's
 * callbacks return at once in simulated time and the replica accounts for the time they would have taken.
 *
 * <p>Not thread-safe (one thread).
 */
final class SimReconciler implements LeaderService {

  /** What the reconciler asks of its replica. */
  interface Host {
    /** Whether this kind of trouble is active for the replica now. */
    boolean trouble(Trouble trouble);

    /** A callback began: the runner may be closed from inside it. */
    void callbackEntered();

    /** start() was called: from now on this replica's reconcilers count as running. */
    void startCalled();

    /** The stop took this long (simulated). */
    void spent(long nanos);

    /** How long a clean stop takes, and how long a hung one. */
    long cleanStopNanos();

    long hungStopNanos();
  }

  private final Host host;
  private final int index;

  SimReconciler(Host host, int index) {
    this.host = host;
    this.index = index;
  }

  @Override
  public void start(LeadershipTerm term) throws Exception {
    host.startCalled();
    host.callbackEntered();
    if (host.trouble(Trouble.START_THROWS_EXCEPTION)) {
      throw new Exception("simulated start failure");
    }
    if (host.trouble(Trouble.START_THROWS_ERROR)) {
      throw new AssertionError("simulated Error from start");
    }
  }

  @Override
  public void stop() throws Exception {
    host.callbackEntered();
    boolean hang = host.trouble(Trouble.STOP_HANGS);
    host.spent(hang ? host.hungStopNanos() : host.cleanStopNanos());
    if (host.trouble(Trouble.STOP_THROWS_EXCEPTION)) {
      throw new IllegalStateException("simulated stop failure");
    }
    if (host.trouble(Trouble.STOP_THROWS_ERROR)) {
      throw new StackOverflowError("simulated Error from stop");
    }
  }

  @Override
  public String toString() {
    return "SimReconciler-" + index;
  }
}
