package io.github.electionpolicy.fabric8;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * Work that must run on one replica at a time: started when this process leads (or at once when it runs
 * unelected) and stopped when it stops leading or closes. The runner calls both methods on its own
 * services' callback thread ({@code election-services[lease:identity]}), one call at a time, never on the
 * loop that renews the Lease.
 *
 * <p>A leader service is where a controller starts the work that must not run twice: its reconcilers
 * (informers, work queues), sweepers or retention loops. It is not a per-resource {@code Reconciler} in the
 * sense of the Java Operator SDK or controller-runtime, which such a service typically starts.
 *
 * <pre>{@code
 * LeaderService orders = new LeaderService() {
 *   private volatile InformerLoop loop;
 *   public void start(LeadershipTerm term) { loop = InformerLoop.start(client, term); }
 *   public void stop() { loop.stopAndJoin(); }
 * };
 * // or, from two lambdas:
 * LeaderService metrics = LeaderService.of(term -> exporter.start(), exporter::stop);
 * }</pre>
 *
 * <p>{@link #start(LeadershipTerm)} should return promptly, leaving long work to threads of its own that
 * watch {@link LeadershipTerm#isValid()}; {@link #stop()} should return once the work has stopped, within
 * {@link LeaseSettings#stopTimeout()}. Implementations need not be thread-safe beyond that.
 *
 * <p><b>What a throw means.</b> Anything thrown from {@code start} or {@code stop}, an {@link Error}
 * included, is caught, logged at ERROR and counts as that reconciler failing; it never leaves the others
 * unattended:
 * <ul>
 *   <li>a failed {@code start} ends the term, stops the reconcilers already started (in reverse order; not
 *       the one whose {@code start} threw, which must clean up before it throws) and gives up leadership as
 *       if it had been lost, so the {@link LossPolicy} applies;
 *   <li>every started reconciler's {@code stop} is called, whatever the others throw;
 *   <li>a {@code stop} that threw, or did not return within {@link LeaseSettings#stopTimeout()}, means the
 *       work may still run: the Lease is then not released but left to expire, so another replica starts
 *       only one lease duration after this one's last renewal.
 * </ul>
 * A {@link VirtualMachineError} ({@code OutOfMemoryError}, {@code StackOverflowError}, ...) is handled the
 * same way, the other reconcilers' {@code stop} included, since stopping them is the only way to end their
 * work; but the JVM may be broken, so the runner then never releases the Lease, never contends again and
 * calls no {@link LossHandler}: under {@link LossPolicy#exit()} it exits, under any other policy it stops
 * (state {@code STOPPED}) and the process should be restarted.
 */
public interface LeaderService {

  /**
   * Starts the work for a term.
   *
   * @param term the term during which the work may run; fence writes with it
   * @throws Exception if the work cannot start (an {@link Error} counts the same); the runner then stops the
   *     reconcilers started before it and gives up leadership as if it had been lost. It does not call this
   *     service's own {@link #stop()}: a {@code start} that throws must first undo what it had begun (stop the
   *     threads and informers it started), since nothing else will
   */
  void start(LeadershipTerm term) throws Exception;

  /**
   * Stops the work and returns once it has stopped.
   *
   * @throws Exception if stopping failed (an {@link Error} counts the same); the runner logs it, still stops
   *     the other reconcilers, and leaves the Lease to expire instead of releasing it
   */
  void stop() throws Exception;

  /**
   * A reconciler from two callbacks.
   *
   * @param onStart called with the term when the work may start
   * @param onStop called when the work must stop
   * @return the reconciler
   */
  static LeaderService of(Consumer<LeadershipTerm> onStart, Runnable onStop) {
    Objects.requireNonNull(onStart, "onStart");
    Objects.requireNonNull(onStop, "onStop");
    return new LeaderService() {
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
        return "LeaderService.of(" + onStart + ", " + onStop + ")";
      }
    };
  }
}
