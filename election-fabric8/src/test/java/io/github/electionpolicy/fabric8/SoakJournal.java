package io.github.electionpolicy.fabric8;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the soak did and saw, with monotonic instants, for {@link InvariantChecker}: graceful closes,
 * outages, health samples, waits for a leader that ran out, and a readable trace of everything.
 */
final class SoakJournal {

  /**
   * A replica was closed gracefully.
   *
   * @param identity the identity of the incarnation closed
   * @param wasRunning whether its reconcilers ran when the close began (it led, so it must release)
   * @param startNanos when {@code close()} was called
   * @param endNanos when {@code close()} returned
   */
  record GracefulClose(String identity, boolean wasRunning, long startNanos, long endNanos) {}

  /**
   * The API server was unreachable for every replica.
   *
   * @param event the schedule event, for the trace
   * @param downNanos when the connections were cut
   * @param returnNanos when they were restored
   * @param stableNanos when one leader followed by all was seen again; negative if never
   */
  record Outage(String event, long downNanos, long returnNanos, long stableNanos) {}

  /**
   * A health snapshot of one replica together with what the soak knew about its link.
   *
   * @param identity the replica
   * @param label when it was taken, e.g. "before heal of #12"
   * @param nanos when it was taken
   * @param health the snapshot
   * @param cutForNanos how long the replica's link had been cut when sampled; negative when its link was up
   * @param sinceStableNanos how long since the replica was last seen stable with a fresh Lease success
   *     ({@link SoakCluster#FRESH}); negative if never
   * @param stablePoint whether the soak had just seen one leader that every replica follows
   */
  record HealthSample(String identity, String label, long nanos, ElectionHealth health, long cutForNanos,
      long sinceStableNanos, boolean stablePoint) {}

  /**
   * After an event, no single leader followed by every replica appeared in time.
   *
   * @param event the event after which the soak waited
   * @param states what each replica reported when the wait ran out
   */
  record Unrecovered(String event, String states) {}

  private final long originNanos = System.nanoTime();
  private final List<GracefulClose> closes = new CopyOnWriteArrayList<>();
  private final List<Outage> outages = new CopyOnWriteArrayList<>();
  private final List<HealthSample> samples = new CopyOnWriteArrayList<>();
  private final List<Unrecovered> unrecovered = new CopyOnWriteArrayList<>();
  private final List<String> trace = new CopyOnWriteArrayList<>();

  long originNanos() {
    return originNanos;
  }

  /** Milliseconds since the soak began, as the trace shows instants. */
  String at(long nanos) {
    return String.format(java.util.Locale.ROOT, "%9.3f", (nanos - originNanos) / 1e6);
  }

  void trace(String line) {
    trace.add(at(System.nanoTime()) + " ms  " + line);
  }

  void closed(GracefulClose close) {
    closes.add(close);
    trace("closed " + close.identity() + (close.wasRunning() ? " (it led)" : " (it followed)") + " in "
        + (close.endNanos() - close.startNanos()) / 1_000_000 + " ms");
  }

  void outage(Outage outage) {
    outages.add(outage);
  }

  void sample(HealthSample sample) {
    samples.add(sample);
  }

  void unrecovered(Unrecovered failure) {
    unrecovered.add(failure);
    trace("NO STABLE LEADER after " + failure.event() + ": " + failure.states());
  }

  List<GracefulClose> closes() {
    return List.copyOf(closes);
  }

  List<Outage> outages() {
    return List.copyOf(outages);
  }

  List<HealthSample> samples() {
    return List.copyOf(samples);
  }

  List<Unrecovered> unrecovered() {
    return List.copyOf(unrecovered);
  }

  List<String> trace() {
    return List.copyOf(trace);
  }
}
