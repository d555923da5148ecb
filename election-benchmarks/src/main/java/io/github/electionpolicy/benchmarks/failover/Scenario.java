package io.github.electionpolicy.benchmarks.failover;

/** How the harness ends the leader's term in a round. */
public enum Scenario {
  /** The leader is closed the way a controller shuts down; it should release the Lease. */
  GRACEFUL,
  /** The leader stops without releasing: the server refuses it and its client is closed abruptly. */
  CRASH
}
