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
    /** Stopped for good; {@link Stopped#cause()} says why. */
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
   * Why a runner stopped; a value of {@link Stopped}, so a caller (or a listener that hears {@code STOPPED}) can
   * tell a close from a stop on its own without asking the runner anything else. An enum, so thread-safe.
   */
  enum StopCause {
    /** {@link ElectionRunner#close()} was called, before the runner stopped for any other reason. */
    CLOSED,
    /**
     * The RBAC preflight found that this process may not use the Lease; the runner never contended, and
     * {@link Stopped#failure()} is the {@link LeaseAccessDeniedException} that names the missing verbs.
     */
    ACCESS_DENIED,
    /**
     * Leadership was lost and the runner will not contend again: the loss policy said so ({@code EXIT}, a
     * custom handler's {@code STOP}), or a service did not stop cleanly after the loss (its {@code stop()} threw
     * or outlived {@link LeaseSettings#stopTimeout()}), or a service threw a {@link VirtualMachineError}.
     */
    LOST,
    /**
     * Running unelected, a service's {@code start} threw; {@link Stopped#failure()} is what it threw, and
     * {@link ElectionRunner.Builder#start()} threw it too.
     */
    START_FAILED,
    /**
     * The runner's own election logic failed (a bug, or an {@link Error} such as an
     * {@link OutOfMemoryError} on the loop); {@link Stopped#failure()} is what was thrown.
     */
    ELECTION_FAILED
  }

  /**
   * Stopped, and why: closed, stopped before contending because the RBAC preflight found a missing verb, lost
   * for good, failed to start unelected, or failed in its own election logic; services do not run (one whose
   * {@code stop()} outlived the stop timeout may still be inside it: {@link ElectionRunner#health()} is then not
   * live). Immutable and thread-safe.
   *
   * <pre>{@code
   * if (runner.state() instanceof ElectionState.Stopped stopped
   *     && stopped.cause() != ElectionState.StopCause.CLOSED) {
   *   log.error("the runner stopped on its own ({}); exiting so that the pod restarts", stopped.cause());
   *   System.exit(1);
   * }
   * }</pre>
   *
   * @param cause why the runner stopped
   * @param failure what was thrown, for {@code ACCESS_DENIED}, {@code START_FAILED} and {@code ELECTION_FAILED};
   *     empty for the others
   */
  record Stopped(StopCause cause, Optional<Throwable> failure) implements ElectionState {
    /**
     * Checks the components are present.
     *
     * @param cause why the runner stopped
     * @param failure what was thrown, possibly empty
     */
    public Stopped {
      Objects.requireNonNull(cause, "cause");
      Objects.requireNonNull(failure, "failure");
    }

    /**
     * A stop with nothing thrown.
     *
     * @param cause why the runner stopped
     */
    public Stopped(StopCause cause) {
      this(cause, Optional.empty());
    }

    @Override
    public Kind kind() {
      return Kind.STOPPED;
    }
  }
}
