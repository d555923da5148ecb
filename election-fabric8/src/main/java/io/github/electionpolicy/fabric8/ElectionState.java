package io.github.electionpolicy.fabric8;

import java.util.Objects;
import java.util.Optional;

/**
 * Where a runner stands: not contending (running unelected), starting (contending, but no Lease call has
 * succeeded yet), following a leader, leading with a term, or stopped. A sealed set of records, with
 * {@link #kind()} for Java 17 callers that switch. A contending runner moves
 * {@code STARTING -> FOLLOWING | LEADING}, then between those two, and ends {@code STOPPED}.
 *
 * <pre>{@code
 * ElectionState state = runner.state();
 * switch (state.kind()) {
 *   case LEADING -> log.info("leading since {}", ((ElectionState.Leading) state).term().acquireTime());
 *   case FOLLOWING -> log.info("following {}", ((ElectionState.Following) state).leader().orElse("nobody"));
 *   case STARTING -> log.info("waiting for the RBAC preflight and the first Lease call");
 *   default -> log.info("{}", state);
 * }
 * }</pre>
 *
 * <p>All implementations are immutable records and thread-safe.
 */
public sealed interface ElectionState
    permits ElectionState.NotContending, ElectionState.Starting, ElectionState.Following,
        ElectionState.Leading, ElectionState.Stopped {

  /** The kinds of state, for Java 17 callers that switch; an enum, so thread-safe. */
  enum Kind {
    /** Running unelected: the decision said not to contend. */
    NOT_CONTENDING,
    /**
     * Contending, but no Lease call has succeeded yet: the RBAC preflight runs, or the first read is in flight
     * or failed. Not ready; live within the health budget.
     */
    STARTING,
    /** Contending without the Lease. */
    FOLLOWING,
    /** Holding the Lease; reconcilers run. */
    LEADING,
    /** Closed, stopped contending after a loss, or stopped before contending after a failed start. */
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
   * Contending, but no Lease call has succeeded yet: the runner's state from the moment
   * {@link ElectionRunner.Builder#start()} returns until the first Lease call succeeds (it then knows whether
   * it follows or leads). Meanwhile the RBAC preflight runs, then the first read; while the API server cannot
   * be reached the runner stays here. Not ready; live within {@link LeaseSettings#healthBudget()} from start.
   * Immutable and thread-safe.
   *
   * <pre>{@code
   * if (runner.state() instanceof ElectionState.Starting) {
   *   log.info("not contending yet: waiting for the API server");
   * }
   * }</pre>
   */
  record Starting() implements ElectionState {
    @Override
    public Kind kind() {
      return Kind.STARTING;
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
   * Closed, stopped contending after a loss, or stopped before contending because the RBAC preflight found
   * a missing verb ({@link ElectionRunner#startupFailure()}); reconcilers do not run. Immutable and thread-safe.
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
