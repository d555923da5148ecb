package io.github.electionpolicy.fabric8;

/**
 * Where one replica of a sharded controller stands, as {@link ShardCoordinator} decides it: exactly one of these
 * values at a time. The coordinator's step table ({@code shard-coordinator-steps.txt}) has a row for every phase
 * and every {@link ShardCoordinatorInput}.
 */
sealed interface ShardCoordinatorPhase {
  /** Built, not started. */
  record Created() implements ShardCoordinatorPhase {}

  /** Contending for its membership Lease; no shard runner exists. */
  record Joining() implements ShardCoordinatorPhase {}

  /** Holding its membership Lease: shard runners exist as the plan says. */
  record Member() implements ShardCoordinatorPhase {}

  /**
   * Its membership Lease was lost (it could not renew it): every shard runner is being closed; it joins again once
   * they all stopped and released.
   */
  record Lapsed() implements ShardCoordinatorPhase {}

  /** Closing every shard runner, for {@code cause}; then it releases its membership Lease. */
  record Leaving(StopCause cause) implements ShardCoordinatorPhase {}

  /** Every shard runner stopped; the membership Lease is being released, for {@code cause}. */
  record Releasing(StopCause cause) implements ShardCoordinatorPhase {}

  /** Stopped for good. */
  record Stopped(StopCause cause) implements ShardCoordinatorPhase {}

  /** Why a coordinator stops. */
  enum StopCause {
    /** {@code close()} was called. */
    CLOSED,
    /**
     * A shard runner stopped without releasing its Lease: its work may still run (a stop threw or outlived its
     * deadline), so this replica contends for nothing more, as a runner whose stop hung contends no more.
     */
    SHARD_ABANDONED
  }
}
