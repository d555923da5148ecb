package io.github.electionpolicy.examples;

import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.LeaderService;
import java.io.PrintStream;

/**
 * The demo's stand-in for a controller's work: while its term is valid it makes one pass every {@value
 * #PASS_MILLIS} ms over a pretend work queue, and it prints when it starts and how many passes it made when
 * it stops. Its loop checks {@link LeadershipTerm#isValid()} before every pass, as real work should, so a
 * replica cut off from the API server stops on its own at the renew deadline.
 *
 * <p>Called by the adapter one call at a time; the pass counter is read after the worker has joined.
 */
final class ToyReconciler implements LeaderService {

  static final long PASS_MILLIS = 100;

  private final String replica;
  private final PrintStream out;
  private volatile Thread worker;
  private volatile boolean stopRequested;
  private int passes;

  ToyReconciler(String replica, PrintStream out) {
    this.replica = replica;
    this.out = out;
  }

  @Override
  public void start(LeadershipTerm term) {
    out.println(Demo.line(replica, "reconciler started"
        + (term.isElected() ? " (fencing token: leaseTransitions=" + term.leaseTransitions() + ")"
            : " WITHOUT a Lease (unelected)")));
    stopRequested = false;
    passes = 0;
    Thread thread = new Thread(() -> work(term), replica + "-reconciler");
    thread.setDaemon(true);
    worker = thread;
    thread.start();
  }

  private void work(LeadershipTerm term) {
    try {
      while (!stopRequested && term.isValid()) {
        passes++;
        Thread.sleep(PASS_MILLIS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void stop() throws InterruptedException {
    Thread thread = worker;
    if (thread == null) {
      return;
    }
    stopRequested = true;
    // Wakes the worker from its pause between passes, so the Lease is released without waiting for it.
    thread.interrupt();
    thread.join();
    worker = null;
    out.println(Demo.line(replica, "reconciler stopped after " + passes + " passes"));
  }
}
