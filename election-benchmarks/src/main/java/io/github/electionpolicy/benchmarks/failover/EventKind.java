package io.github.electionpolicy.benchmarks.failover;

/** What an {@link BenchEvent} records. */
public enum EventKind {
  /** A replica's reconcilers started: it leads. Recorded by the contender's callback. */
  RECONCILERS_STARTED,
  /** A replica's reconcilers stopped. Recorded by the contender's callback. */
  RECONCILERS_STOPPED,
  /** The harness is about to close a replica gracefully. */
  CLOSE_REQUESTED,
  /**
   * The harness crashed a replica: from here on the server applies nothing it sends, its connections are
   * dropped, and its client is closed.
   */
  CRASHED,
  /**
   * The mock API server answered a request on a Lease from a replica. Detail: method, status, path. Never
   * recorded on a real server, whose requests pass the replicas' proxies encrypted.
   */
  LEASE_REQUEST,
  /**
   * The API server applied a write (create, update, patch) on a Lease. On the mock it is recorded as the server
   * applies it, for the replica that sent it (detail as above); on a real server, when the harness's watch
   * delivers it, for the replica the Lease then names as holder ({@code ""} for none).
   */
  LEASE_WRITE_OK,
  /**
   * The mock server reported that a watch event could not be written within 30 s: one of its event loops was
   * blocked, and requests on it were delayed. A round that overlaps one is not a fair measurement.
   */
  MOCK_SERVER_STALL
}
