package io.github.electionpolicy.fabric8;

/**
 * Deliberate defects of the {@link ShardDriver}, for the simulation's broken variants only; production code uses
 * {@link #NONE}.
 */
enum ShardDriverFlaw {
  /** The real driver. */
  NONE,
  /** A shard runner that stopped counts as released, though its work's stop outlived the stop timeout. */
  STOPPED_COUNTS_AS_RELEASED,
  /** A new shard runner's sighting dated at its start, not the view's first sight: a crash costs 2 lease durations. */
  SIGHTING_DATED_AT_CONTEND,
  /**
   * The view counts as listed at the first Lease its list and watch reports, not at {@code listed()}: the coordinator
   * plans from a part of the first list (every shard listed later seen free), as before the first-list fix.
   */
  SYNCED_AT_FIRST_LEASE,
  /**
   * A shard runner dates a hand-over it takes in from its own sight of it ({@link LeaseProtocol.Flaw#HAND_OVER_DATED_AT_SIGHT}),
   * not from the membership write its proof names: a successor that sees it late leads past the others' wait.
   */
  HAND_OVER_DATED_AT_SIGHT,
  /**
   * A shard runner that stopped on a loss ({@code LOST}: its loss handler answered {@code STOP}, or an {@code EXIT}
   * whose exiter returned) does not make the replica leave: the coordinator plans the shard again and the replica
   * contends for it, as before review r1's fix.
   */
  LOSS_RECONTENDS
}
