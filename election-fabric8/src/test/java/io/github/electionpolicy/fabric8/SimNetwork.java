package io.github.electionpolicy.fabric8;

import java.util.SplittableRandom;

/**
 * The network between the replicas and the API server, with the faults active right now: partitions (both
 * ways, requests lost, or responses lost: a write is then applied but never answered), the server down, slow
 * legs, and watch trouble. Each leg's latency is drawn from the run's one random source, so a schedule replays
 * identically. Fault windows may overlap, so each is a counter.
 *
 * <p>Not thread-safe (one thread).
 */
final class SimNetwork {

  private final SplittableRandom random;
  private final long maxLatencyNanos;
  private final int[] cutBoth;
  private final int[] requestsLost;
  private final int[] responsesLost;
  private final int[] slow;
  private final long[] slowLatencyNanos;
  private int serverDown;
  private int dropEvents;
  private int delayEvents;
  private long delayNanos;

  SimNetwork(SplittableRandom random, long maxLatencyNanos, int replicas) {
    this.random = random;
    this.maxLatencyNanos = Math.max(1, maxLatencyNanos);
    this.cutBoth = new int[replicas];
    this.requestsLost = new int[replicas];
    this.responsesLost = new int[replicas];
    this.slow = new int[replicas];
    this.slowLatencyNanos = new long[replicas];
  }

  /** The latency of a request leg from {@code replica}, or -1 if it is lost. */
  long up(int replica) {
    if (cutBoth[replica] > 0 || requestsLost[replica] > 0) {
      return -1;
    }
    return latency(replica);
  }

  /** The latency of a response or watch leg to {@code replica}, or -1 if it is lost. */
  long down(int replica) {
    if (cutBoth[replica] > 0 || responsesLost[replica] > 0) {
      return -1;
    }
    return latency(replica);
  }

  private long latency(int replica) {
    if (slow[replica] > 0) {
      return 1 + random.nextLong(slowLatencyNanos[replica]);
    }
    return 1 + random.nextLong(maxLatencyNanos);
  }

  /** Whether watches to {@code replica} cannot carry anything: they break. */
  boolean watchCut(int replica) {
    return serverDown > 0 || cutBoth[replica] > 0 || responsesLost[replica] > 0;
  }

  boolean serverDown() {
    return serverDown > 0;
  }

  /** Whether to drop this watch event (half of them while events are dropped). */
  boolean dropEvent() {
    return dropEvents > 0 && random.nextBoolean();
  }

  /** Extra delay for a watch event. */
  long eventDelay() {
    return delayEvents > 0 ? random.nextLong(delayNanos + 1) : 0;
  }

  void partition(int replica, SimSchedule.Direction direction, int delta) {
    switch (direction) {
      case BOTH:
        cutBoth[replica] += delta;
        break;
      case REQUESTS_LOST:
        requestsLost[replica] += delta;
        break;
      default:
        responsesLost[replica] += delta;
    }
  }

  void slow(int replica, long latencyNanos, int delta) {
    slow[replica] += delta;
    slowLatencyNanos[replica] = delta > 0 ? Math.max(slowLatencyNanos[replica], latencyNanos)
        : slow[replica] == 0 ? 0 : slowLatencyNanos[replica];
  }

  void serverDown(int delta) {
    serverDown += delta;
  }

  void dropEvents(int delta) {
    dropEvents += delta;
  }

  /** The longest extra delay of a watch event now: the longest of the delay windows open (0 with none). */
  long eventDelayNanos() {
    return delayEvents > 0 ? delayNanos : 0;
  }

  /** The longest latency of a slow leg to or from {@code replica} now: the longest of its slow windows open (0: none). */
  long slowLatencyNanos(int replica) {
    return slow[replica] > 0 ? slowLatencyNanos[replica] : 0;
  }

  void delayEvents(long nanos, int delta) {
    delayEvents += delta;
    delayNanos = delta > 0 ? Math.max(delayNanos, nanos) : delayEvents == 0 ? 0 : delayNanos;
  }

  /** Whether any fault touches {@code replica} now: a graceful close is then not expected to release. */
  boolean disturbs(int replica) {
    return serverDown > 0 || cutBoth[replica] > 0 || requestsLost[replica] > 0 || responsesLost[replica] > 0
        || slow[replica] > 0;
  }
}
