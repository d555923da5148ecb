package io.github.electionpolicy.fabric8;

import java.util.Objects;
import java.util.Optional;

/**
 * Where a runner stands: not contending (running unelected), following a leader, leading with a term, or
 * stopped. A sealed set of records, with {@link #kind()} for Java 17 callers that switch.
 *
 * <pre>{@code
 * ElectionState state = runner.state();
 * switch (state.kind()) {
 *   case LEADING -> log.info("leading since {}", ((ElectionState.Leading) state).term().acquireTime());
 *   case FOLLOWING -> log.info("following {}", ((ElectionState.Following) state).leader().orElse("nobody"));
 *   default -> log.info("{}", state);
 * }
 * }</pre>
 *
 * <p>All implementations are immutable records and thread-safe.
 */
public sealed interface ElectionState
    permits ElectionState.NotContending, ElectionState.Following, ElectionState.Leading,
        ElectionState.Stopped {

  /** The kinds of state, for Java 17 callers that switch; an enum, so thread-safe. */
  enum Kind {
    /** Running unelected: the decision said not to contend. */
    NOT_CONTENDING,
    /** Contending without the Lease. */
    FOLLOWING,
    /** Holding the Lease; reconcilers run. */
    LEADING,
    /** Closed, or stopped contending after a loss. */
    STOPPED
  }

  /**
   * The kind of this state.
   *
   * @return the kind
   */
  Kind kind();

  /**
   * Running unelected: reconcilers run without any Lease. Immutable and thread-safe.
   *
   * <pre>{@code
   * if (runner.state() instanceof ElectionState.NotContending) {
   *   log.warn("running without leader election: only safe with one replica");
   * }
   * }</pre>
   *
   * @param identity the identity of this process, for logs
   */
  record NotContending(String identity) implements ElectionState {
    /**
     * Checks the identity is present.
     *
     * @param identity the identity of this process
     */
    public NotContending {
      Objects.requireNonNull(identity, "identity");
    }

    @Override
    public Kind kind() {
      return Kind.NOT_CONTENDING;
    }
  }

  /**
   * Contending without holding the Lease. Immutable and thread-safe.
   *
   * <pre>{@code
   * if (runner.state() instanceof ElectionState.Following following) {
   *   status.setLeader(following.leader().orElse("none"));
   * }
   * }</pre>
   *
   * @param leader the identity of the holder last seen, empty when none is known or the Lease is free
   */
  record Following(Optional<String> leader) implements ElectionState {
    /**
     * Checks the leader is present, possibly empty.
     *
     * @param leader the identity of the holder last seen
     */
    public Following {
      Objects.requireNonNull(leader, "leader");
    }

    @Override
    public Kind kind() {
      return Kind.FOLLOWING;
    }
  }

  /**
   * Holding the Lease. Immutable and thread-safe (the term itself is thread-safe).
   *
   * <pre>{@code
   * if (runner.state() instanceof ElectionState.Leading leading) {
   *   fencingToken = leading.term().leaseTransitions();
   * }
   * }</pre>
   *
   * @param term the current term
   */
  record Leading(LeadershipTerm term) implements ElectionState {
    /**
     * Checks the term is present.
     *
     * @param term the current term
     */
    public Leading {
      Objects.requireNonNull(term, "term");
    }

    @Override
    public Kind kind() {
      return Kind.LEADING;
    }
  }

  /**
   * Closed, or stopped contending after a loss; reconcilers do not run. Immutable and thread-safe.
   *
   * <pre>{@code
   * boolean done = runner.state().equals(new ElectionState.Stopped());
   * }</pre>
   */
  record Stopped() implements ElectionState {
    @Override
    public Kind kind() {
      return Kind.STOPPED;
    }
  }
}
