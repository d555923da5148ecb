package com.example.orders;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's work, run only while this replica leads: once a second, while its term is valid, it lists
 * the ConfigMaps labelled {@code app=orders} in the client's namespace (a real reconciler would act on them).
 * {@code start} returns at once and leaves the loop to a thread of its own; {@code stop} returns once that
 * thread has ended.
 *
 * <p>The runner calls it one call at a time.
 */
final class OrdersReconciler implements LeaderService {

  private static final Logger LOG = LoggerFactory.getLogger(OrdersReconciler.class);
  private static final long PASS_MILLIS = 1000;

  private final KubernetesClient client;
  private volatile Thread worker;
  private volatile boolean stopRequested;
  private volatile int passes;

  OrdersReconciler(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public void start(LeadershipTerm term) {
    LOG.info("reconciling orders as {} (fencing token: leaseTransitions={})", term.holderIdentity(),
        term.leaseTransitions());
    stopRequested = false;
    passes = 0;
    Thread thread = new Thread(() -> reconcileWhileLeading(term), "orders-reconciler");
    worker = thread;
    thread.start();
  }

  private void reconcileWhileLeading(LeadershipTerm term) {
    // The term's validity is checked before every pass: a replica cut off from the API server stops on its
    // own at the renew deadline, before anyone else can lead.
    while (!stopRequested && term.isValid()) {
      try {
        int orders = client.configMaps().withLabel("app", "orders").list().getItems().size();
        passes++;
        LOG.info("reconcile pass {}: {} orders", passes, orders);
      } catch (KubernetesClientException e) {
        if (stopRequested) {
          return;
        }
        LOG.warn("reconcile pass failed, retrying: {}", e.getMessage());
      }
      try {
        Thread.sleep(PASS_MILLIS);
      } catch (InterruptedException stopping) {
        return;
      }
    }
  }

  @Override
  public void stop() throws InterruptedException {
    Thread thread = worker;
    if (thread == null) {
      return;
    }
    stopRequested = true;
    thread.interrupt();
    thread.join();
    worker = null;
    LOG.info("stopped reconciling orders after {} passes", passes);
  }
}
