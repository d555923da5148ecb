package io.github.electionpolicy.fabric8;

import java.util.Objects;

/**
 * One shard's work as its runner's only {@link LeaderService}: it calls the user's {@link ShardService} for its shard
 * and knows whether that work may still run, which is what the coordinator must hear when the shard's runner stops
 * ({@link ShardCoordinatorInput.ShardStopped#released()}): a start or stop in progress, or a start not followed by a
 * stop that returned, means it may. Thread-safe: the runner calls it on its callback threads, the driver reads it on
 * the loop.
 */
final class ShardWork implements LeaderService {

  private final int shard;
  private final ShardService service;
  // Calls of start or stop not returned, plus one while a start returned without a clean stop after it.
  private int mayRun;
  private boolean started;

  ShardWork(int shard, ShardService service) {
    this.shard = shard;
    this.service = Objects.requireNonNull(service, "service");
  }

  @Override
  public void start(LeadershipTerm term) throws Exception {
    synchronized (this) {
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

  /** Whether the shard's work may still run: a call in progress, or started and not stopped cleanly. */
  synchronized boolean mayRun() {
    return mayRun > 0;
  }

  @Override
  public String toString() {
    return "shard " + shard + " of " + service;
  }
}
