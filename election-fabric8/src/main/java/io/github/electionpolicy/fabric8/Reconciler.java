package io.github.electionpolicy.fabric8;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * Work that must run on one replica at a time: started when this process leads (or at once when it runs
 * unelected) and stopped when it stops leading or closes. The runner calls both methods on its own
 * reconciler thread, one call at a time, never on the thread that renews the Lease.
 *
 * <pre>{@code
 * Reconciler orders = new Reconciler() {
 *   private volatile InformerLoop loop;
 *   public void start(LeadershipTerm term) { loop = InformerLoop.start(client, term); }
 *   public void stop() { loop.stopAndJoin(); }
 * };
 * // or, from two lambdas:
 * Reconciler metrics = Reconciler.of(term -> exporter.start(), exporter::stop);
 * }</pre>
 *
 * <p>{@link #start(LeadershipTerm)} should return promptly, leaving long work to threads of its own that
 * watch {@link LeadershipTerm#isValid()}; {@link #stop()} should return once the work has stopped, within
 * {@link LeaseSettings#stopTimeout()}. Implementations need not be thread-safe beyond that.
 */
public interface Reconciler {

  /**
   * Starts the work for a term.
   *
   * @param term the term during which the work may run; fence writes with it
   * @throws Exception if the work cannot start; the runner then stops the reconcilers started before it
   *     and gives up leadership as if it had been lost
   */
  void start(LeadershipTerm term) throws Exception;

  /**
   * Stops the work and returns once it has stopped.
   *
   * @throws Exception if stopping failed; the runner logs it and goes on
   */
  void stop() throws Exception;

  /**
   * A reconciler from two callbacks.
   *
   * @param onStart called with the term when the work may start
   * @param onStop called when the work must stop
   * @return the reconciler
   */
  static Reconciler of(Consumer<LeadershipTerm> onStart, Runnable onStop) {
    Objects.requireNonNull(onStart, "onStart");
    Objects.requireNonNull(onStop, "onStop");
    return new Reconciler() {
      @Override
      public void start(LeadershipTerm term) {
        onStart.accept(term);
      }

      @Override
      public void stop() {
        onStop.run();
      }

      @Override
      public String toString() {
        return "Reconciler.of(" + onStart + ", " + onStop + ")";
      }
    };
  }
}
