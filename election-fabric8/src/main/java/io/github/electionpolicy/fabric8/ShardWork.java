package io.github.electionpolicy.fabric8;

import java.util.Objects;

/**
 * One shard's work as its runner's only {@link LeaderService}: it calls the user's {@link ShardService} for its shard
 * and knows whether that work may still run, which is what the coordinator must hear when the shard's runner stops
 * ({@link ShardCoordinatorInput.ShardStopped#released()}): a start or stop in progress, or a start not followed by a
 * stop that returned, means it may. Once the coordinator hands the shard over ({@link #refuseStarts}), a start not
 * begun by then starts nothing: the runner's start may already be past its term check on a callback thread as the
 * hand-over ends the term, and no new work for a shard handed over may start here (NoShardStartAfterItsHandOverTest);
 * the stop that follows such a start has nothing to stop and calls nothing, as after a start that threw. Thread-safe:
 * the runner calls it on its callback threads, the driver on the loop.
 */
final class ShardWork implements LeaderService {

  private final int shard;
  private final ShardService service;
  // Calls of start or stop not returned, plus one while a start returned without a clean stop after it.
  private int mayRun;
  private boolean started;
  // Set by refuseStarts; then whether a start was refused since the last start that ran.
  private boolean refused;
  private boolean startRefused;

  ShardWork(int shard, ShardService service) {
    this.shard = shard;
    this.service = Objects.requireNonNull(service, "service");
  }

  @Override
  public void start(LeadershipTerm term) throws Exception {
    synchronized (this) {
      if (refused) {
        startRefused = true;
        return;
      }
      mayRun++;
    }
    boolean returned = false;
    try {
      service.start(shard, term);
      returned = true;
    } finally {
      synchronized (this) {
        mayRun--;
        if (returned) {
          // Until a stop returns; a start that threw undid its work, as the contract asks.
          started = true;
          mayRun++;
        }
      }
    }
  }

  @Override
  public void stop() throws Exception {
    synchronized (this) {
      if (startRefused && !started) {
        return;
      }
      mayRun++;
    }
    boolean returned = false;
    try {
      service.stop(shard);
      returned = true;
    } finally {
      synchronized (this) {
        mayRun--;
        if (returned && started) {
          started = false;
          mayRun--;
        }
      }
    }
  }

  /**
   * The shard is handed over: from now on no start begins (one already begun goes on). Decided under the same lock as
   * a start's count, so that the answer and the refusal are one decision.
   *
   * @return whether the shard's work may still run ({@link #mayRun()}) as the refusal takes effect
   */
  synchronized boolean refuseStarts() {
    refused = true;
    return mayRun > 0;
  }

  /** Whether the shard's work may still run: a call in progress, or started and not stopped cleanly. */
  synchronized boolean mayRun() {
    return mayRun > 0;
  }

  @Override
  public String toString() {
    return "shard " + shard + " of " + service;
  }
}
