package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.RequestConfig;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every Lease call, each with its own timeout and no hidden retries, whatever the settings of the client
 * the user passed in. Calls run on worker threads and the caller waits a bounded time, so a hung
 * connection never holds the election thread past its deadline.
 */
final class LeaseRequests implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(LeaseRequests.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final long requestTimeoutNanos;
  private final ExecutorService workers;

  /**
   * @param threadTag what tells this runner's worker threads from others', e.g. {@code "lease:identity"}
   */
  LeaseRequests(KubernetesClient userClient, String namespace, String name, Duration requestTimeout,
      String threadTag) {
    int timeoutMillis = (int) Math.min(Integer.MAX_VALUE, requestTimeout.toMillis());
    // A derived client shares the user's HTTP client and request settings (impersonation included, so the
    // Lease calls run as the same user as the preflight's reviews) but not its retry and timeout settings:
    // the retries of a default client would keep a cut-off leader believing it leads long after its deadline.
    RequestConfig userRequests = userClient.getConfiguration().getRequestConfig();
    this.client = userClient
        .newClient((userRequests == null ? new RequestConfigBuilder() : new RequestConfigBuilder(userRequests))
            .withRequestTimeout(timeoutMillis)
            .withRequestRetryBackoffLimit(0)
            .withWatchReconnectInterval(Math.max(100, timeoutMillis / 4))
            .withWatchReconnectLimit(-1)
            .build())
        .adapt(KubernetesClient.class);
    this.namespace = namespace;
    this.name = name;
    this.requestTimeoutNanos = requestTimeout.toNanos();
    AtomicInteger count = new AtomicInteger();
    this.workers = Executors.newCachedThreadPool(task -> {
      Thread thread = new Thread(task, "election-lease-request-" + count.incrementAndGet() + "[" + threadTag + "]");
      thread.setDaemon(true);
      return thread;
    });
  }

  KubernetesClient client() {
    return client;
  }

  long requestTimeoutNanos() {
    return requestTimeoutNanos;
  }

  /** Reads the Lease; null when it does not exist. */
  Lease get(long waitNanos) throws LeaseCallFailed {
    return leaseCall("get Lease", () -> client.leases().inNamespace(namespace).withName(name).get(), waitNanos);
  }

  Lease create(Lease lease, long waitNanos) throws LeaseCallFailed {
    return leaseCall("create Lease", () -> client.leases().inNamespace(namespace).resource(lease).create(),
        waitNanos);
  }

  /** Replaces the Lease, conditional on the resourceVersion it carries: a concurrent change fails with 409. */
  Lease update(Lease lease, long waitNanos) throws LeaseCallFailed {
    return leaseCall("update Lease", () -> client.leases().inNamespace(namespace).resource(lease).update(),
        waitNanos);
  }

  private <T> T leaseCall(String what, Callable<T> request, long waitNanos) throws LeaseCallFailed {
    return call(what, request, Math.min(waitNanos, requestTimeoutNanos));
  }

  /** Runs {@code request} on a worker and waits at most {@code waitNanos} for it. */
  <T> T call(String what, Callable<T> request, long waitNanos) throws LeaseCallFailed {
    long wait = Math.max(1, waitNanos);
    Future<T> future;
    try {
      future = workers.submit(request);
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      throw new LeaseCallFailed(what + " refused: the election is closing", closed, 0);
    }
    try {
      return future.get(wait, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      future.cancel(true);
      throw new LeaseCallFailed(what + " got no answer within " + Durations.approx(Duration.ofNanos(wait)),
          e, 0);
    } catch (InterruptedException e) {
      future.cancel(true);
      Thread.currentThread().interrupt();
      throw new LeaseCallFailed(what + " interrupted", e, 0);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      int code = cause instanceof KubernetesClientException ? ((KubernetesClientException) cause).getCode() : 0;
      throw new LeaseCallFailed(what + " failed: " + FailureCause.describe(cause), cause, Math.max(0, code));
    }
  }

  /** What a watch of the Lease reports; called on fabric8's threads. */
  interface WatchListener {
    /** The watch is open: events from now on are delivered. */
    void opened();

    /** An event: the Lease as the server sent it, or {@code null} when it was deleted. */
    void changed(Lease lease);

    /** The watch ended for good (fabric8 gave up on it); the caller must poll and watch anew. */
    void closed();
  }

  /**
   * Watches the Lease. fabric8 reconnects a dropped watch by itself, resuming from the last resourceVersion
   * it saw; it reports {@link WatchListener#closed()} only when it gives up (e.g. 410 Gone).
   */
  Future<Watch> watch(WatchListener listener) {
    return workers.submit(() -> {
      Watch watch = client.leases().inNamespace(namespace).withName(name)
          .watch(new Watcher<Lease>() {
            @Override
            public void eventReceived(Action action, Lease lease) {
              if (action == Action.DELETED) {
                listener.changed(null);
              } else if (action == Action.ADDED || action == Action.MODIFIED) {
                listener.changed(lease);
              }
            }

            @Override
            public void onClose(WatcherException cause) {
              LOG.debug("Watch of Lease {}/{} closed: {}", namespace, name, cause.getMessage());
              listener.closed();
            }
          });
      listener.opened();
      return watch;
    });
  }

  /** Interrupts the calls in flight and ends the workers; no call is accepted after. */
  @Override
  public void close() {
    workers.shutdownNow();
  }

  /** Waits until every worker ended after {@link #close()}. */
  boolean awaitTermination(long timeoutNanos) throws InterruptedException {
    return workers.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
  }
}
