package io.github.electionpolicy.benchmarks.scale;

import io.github.electionpolicy.benchmarks.failover.Distribution;
import io.github.electionpolicy.benchmarks.failover.Timings;
import java.util.Map;

/**
 * What one scale run measured. Immutable.
 *
 * @param contender {@code stock} or {@code ours}
 * @param timings the timings
 * @param elections how many Leases
 * @param replicas replicas in all (elections, or twice that with followers)
 * @param before the threads before the shared client was built
 * @param leading the threads when every election had a leader
 * @param peakExcludingServer the most threads (mock server's excluded) seen over the settle window
 * @param peakLibrary the most library threads seen over the settle window
 * @param atPeak the census at the peak
 * @param steady the census with the most threads over the steady-state window, or empty when not measured
 * @param heapPerElectionBytes used heap after GC, after minus before, divided by the elections
 * @param toLeadSeconds time from each Lease's first replica's start() to its first leader, over the Leases
 * @param startAllSeconds how long the harness took to call start() on every replica
 */
public record ScaleResult(
    String contender,
    Timings timings,
    int elections,
    int replicas,
    ThreadCensus before,
    ThreadCensus leading,
    int peakExcludingServer,
    int peakLibrary,
    ThreadCensus atPeak,
    java.util.Optional<ThreadCensus> steady,
    double heapPerElectionBytes,
    Distribution toLeadSeconds,
    double startAllSeconds) {

  /** Threads added in all at the peak (the in-JVM mock server's not counted). */
  public int addedInAll() {
    return peakExcludingServer - before.excludingServer();
  }

  /** Library threads added at the peak. */
  public int addedLibrary() {
    return peakLibrary - before.library();
  }

  /** Threads added in all in the steady state, or -1 when not measured. */
  public int addedInAllSteady() {
    return steady.map(c -> c.excludingServer() - before.excludingServer()).orElse(-1);
  }

  /** Library threads added in the steady state, or -1 when not measured. */
  public int addedLibrarySteady() {
    return steady.map(c -> c.library() - before.library()).orElse(-1);
  }

  /** The added thread groups at the peak, for the reader. */
  public Map<String, Integer> addedGroups() {
    return atPeak.addedSince(before);
  }
}
