package io.github.electionpolicy.springboot.example;

import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The example's leader-only work: a loop on a thread of its own that "reconciles" twice a second while its term
 * is valid, logging the term's fencing token. {@code start} returns at once; {@code stop} returns once the loop
 * has ended.
 */
final class OrdersReconciler implements LeaderService {

  private static final Logger LOG = LoggerFactory.getLogger(OrdersReconciler.class);

  private volatile Thread loop;

  @Override
  public void start(LeadershipTerm term) {
    Thread thread = new Thread(() -> reconcileWhileValid(term), "orders-reconciler");
    loop = thread;
    thread.start();
  }

  private static void reconcileWhileValid(LeadershipTerm term) {
    int passes = 0;
    try {
      while (term.isValid()) {
        passes++;
        LOG.info("reconciling orders, pass {} (fencing token: leaseTransitions={})", passes,
            term.leaseTransitions());
        term.awaitEnd(java.time.Duration.ofMillis(500));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    LOG.info("reconciler stopped after {} passes", passes);
  }

  @Override
  public void stop() throws InterruptedException {
    Thread thread = loop;
    if (thread != null) {
      thread.interrupt();
      thread.join();
    }
  }
}
