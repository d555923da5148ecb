package io.github.electionpolicy.benchmarks.failover;

/** What an {@link BenchEvent} records. */
public enum EventKind {
  /** A replica's reconcilers started: it leads. Recorded by the contender's callback. */
  RECONCILERS_STARTED,
  /** A replica's reconcilers stopped. Recorded by the contender's callback. */
  RECONCILERS_STOPPED,
  /** The harness is about to close a replica gracefully. */
  CLOSE_REQUESTED,
  /** The harness crashed a replica: the server refuses it from here on and its client is closed. */
  CRASHED,
  /** The mock API server answered a request on a Lease from a replica. Detail: method, status, path. */
  LEASE_REQUEST,
  /** The mock API server applied a write (create, update, patch) on a Lease from a replica. Detail as above. */
  LEASE_WRITE_OK,
  /**
   * The mock server reported that a watch event could not be written within 30 s: one of its event loops was
   * blocked, and requests on it were delayed. A round that overlaps one is not a fair measurement.
   */
  MOCK_SERVER_STALL
}
