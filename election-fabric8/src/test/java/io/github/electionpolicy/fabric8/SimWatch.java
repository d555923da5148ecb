package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Moment;

/**
 * {@link LeaseWatch} rewritten for one thread and simulated time, rule for rule: inputs for the protocol are
 * opened, closed and the newest event (dated when it arrived); a watch that fails to start or ends starts again
 * after one retry period, doubling up to the lease duration; callbacks of an older watch are ignored. Keep it
 * in step with LeaseWatch: the simulation is only as good as this mirror.
 *
 * <p>Not thread-safe (one thread).
 */
final class SimWatch {

  /** The simulator's side: sends the watch request, and later calls back with its generation. */
  interface Wire {
    void open(int generation);

    void cancel();

    long monoNow();
  }

  /** A watch input for the protocol, as in LeaseWatch.Input. */
  interface Input {
    LeaseStep deliverTo(LeaseProtocol protocol, Moment now);
  }

  private final Wire wire;
  private final long retryPeriodNanos;
  private final long leaseDurationNanos;

  private boolean running;
  private boolean failedToStart;
  private int generation;
  private boolean open;
  private boolean closedPending;
  private boolean openedPending;
  private Input pendingEvent;
  private int failures;
  private long nextStartNanos;

  SimWatch(Wire wire, long retryPeriodNanos, long leaseDurationNanos) {
    this.wire = wire;
    this.retryPeriodNanos = retryPeriodNanos;
    this.leaseDurationNanos = leaseDurationNanos;
    this.nextStartNanos = wire.monoNow();
  }

  /** Starts a watch unless one runs, is starting, or waits out its backoff. */
  void ensureRunning(boolean closing) {
    if (running && failedToStart) {
      ended();
    }
    if (!running && !closing && wire.monoNow() - nextStartNanos >= 0) {
      running = true;
      failedToStart = false;
      wire.open(++generation);
    }
  }

  void opened(int from) {
    if (from == generation && running) {
      open = true;
      openedPending = true;
      failures = 0;
    }
  }

  void failedToStart(int from) {
    if (from == generation && running) {
      failedToStart = true;
    }
  }

  void changed(int from, LeaseRecord record, long arrivedNanos) {
    if (from == generation) {
      pendingEvent = (protocol, now) -> protocol.watchEvent(now, arrivedNanos, record);
    }
  }

  void closed(int from) {
    if (from == generation) {
      ended();
    }
  }

  /** The next input for the protocol, if any. */
  Input takeInput() {
    if (closedPending) {
      closedPending = false;
      return LeaseProtocol::watchClosed;
    }
    if (openedPending) {
      openedPending = false;
      return LeaseProtocol::watchOpened;
    }
    Input event = pendingEvent;
    pendingEvent = null;
    return event;
  }

  private void ended() {
    running = false;
    wire.cancel();
    if (open) {
      open = false;
      closedPending = true;
    }
    openedPending = false;
    long backoff = Math.min(leaseDurationNanos, retryPeriodNanos << Math.min(failures, 20));
    failures++;
    nextStartNanos = wire.monoNow() + backoff;
  }

  /** Stops the watch; the protocol hears that it closed. */
  void stop() {
    if (running) {
      wire.cancel();
    }
    running = false;
    if (open) {
      open = false;
      closedPending = true;
    }
    openedPending = false;
    pendingEvent = null;
    generation++;
  }
}
