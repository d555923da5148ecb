package io.github.electionpolicy.fabric8;

/**
 * The send times of this process's own writes of another Lease (a sharded runner's membership Lease), by the
 * resourceVersion each write made: what a hand-over naming this process is dated from
 * ({@link LeaseProtocol#handOverProofs}).
 */
@FunctionalInterface
interface OwnWrites {
  /** None known: no hand-over is taken in. */
  OwnWrites NONE = version -> java.util.OptionalLong.empty();

  /** When the write that made {@code resourceVersion} was sent, on the protocol's monotonic clock; empty if unknown. */
  java.util.OptionalLong sentNanos(String resourceVersion);
}
