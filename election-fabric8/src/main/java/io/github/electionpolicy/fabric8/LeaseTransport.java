package io.github.electionpolicy.fabric8;

import java.util.Optional;
import java.util.function.Consumer;

/**
 * The seam between a runner and the API server: the Lease calls the protocol asks for, the follower's watch
 * and the RBAC preflight, each asynchronous. Answers and watch events may come on any thread, at most once per
 * call; the runner takes them onto its loop, and times calls out on its own clock, so a transport never blocks
 * the loop. Production runners use {@link Fabric8LeaseTransport}; the simulation, an API server in simulated
 * time.
 *
 * <p>Implementations are thread-safe.
 */
interface LeaseTransport extends AutoCloseable {

  /** A call or watch in flight. */
  interface Call {
    /** Ends it: a request is abandoned (its answer, if one still comes, is dropped), a watch is closed. */
    void cancel();
  }

  /** Where a call's answer goes. */
  interface Answered {
    /**
     * The answer; {@code failure} is what failed when the answer is {@link LeaseStep.Answer.Failed}, else null.
     */
    void answered(LeaseStep.Answer answer, Throwable failure);
  }

  /** What a watch of the Lease reports. */
  interface WatchEvents {
    /** The watch is open: changes from now on are reported. */
    void opened();

    /** The Lease as the server sent it; {@code null} when it was deleted. */
    void changed(LeaseRecord record);

    /** The watch ended for good, or could not open. */
    void closed();
  }

  /** Reads the Lease: {@link LeaseStep.Answer.Found}, {@link LeaseStep.Answer.Missing} or a failure. */
  Call read(Answered done);

  /** Creates the Lease: {@link LeaseStep.Answer.Written} or a failure. */
  Call create(LeaseRecord record, Answered done);

  /** Replaces the Lease, conditional on the record's resourceVersion: {@link LeaseStep.Answer.Written} or a failure. */
  Call update(LeaseRecord record, Answered done);

  /**
   * Deletes the Lease, conditional on {@code released}'s resourceVersion (and the uid of the Lease last seen with
   * it, if known), so that a Lease anyone wrote since, or a new one of the same name, is left in place: {@link
   * LeaseStep.Answer.Missing} once deleted, else a failure ({@link LeaseStep.FailureKind#CONFLICT} when the
   * precondition did not hold, {@link LeaseStep.FailureKind#NOT_FOUND} when it was gone already). Only a sharded
   * runner's membership Lease is deleted, after its clean release ({@link LeaseProtocol#cleanlyReleased}).
   */
  Call delete(LeaseRecord released, Answered done);

  /** Watches the Lease. */
  Call watch(WatchEvents events);

  /**
   * Runs the RBAC preflight; {@code done} gets the denial that must stop the runner, if any, or {@code failed}
   * what the preflight threw (not expected: a review's own failures are an UNKNOWN verdict).
   */
  Call preflight(Consumer<Optional<LeaseAccessDeniedException>> done, Consumer<Throwable> failed);

  /**
   * The elector's first attempt is over (it leads, follows or waits, after its verdict): advice the preflight
   * kept off the start path (the {@code watch} review) may be asked now. Called once, on the loop; never blocks.
   */
  default void firstAttemptOver() {}

  /**
   * Whether the preflight found the advised {@code verb} denied and warned of it already, so that a refusal of it
   * later (the close's {@code delete}) need not warn again. Any thread.
   */
  default boolean warnedDenied(String verb) {
    return false;
  }

  /**
   * Records a leadership Event on the Lease, best effort: written off the caller's thread, bounded by a short
   * timeout and never retried. {@code done} runs exactly once, on any thread, when the write is over, whatever
   * became of it (written, refused, failed, or not sent); what failed is the transport's to report. Not a call
   * in flight: {@link #close()} neither cuts a write short nor refuses one, so the Event that ends a closing
   * runner's term is still written (a transport whose server is gone may drop it).
   */
  void recordEvent(LeadershipEvent event, Runnable done);

  /** Ends every call and watch in flight; nothing is sent after. */
  @Override
  void close();
}
