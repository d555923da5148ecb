package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.github.electionpolicy.fabric8.LeaseTransport.Call;
import io.github.electionpolicy.fabric8.LeaseTransport.WatchEvents;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The follower's watch of one {@link Fabric8LeaseTransport}'s Lease: opens each watch on the shared workers
 * ({@link SharedPools#io()}), reports its events, and closes a watch that is cancelled (or whose transport closes)
 * while it opens as soon as it is open, so none stays behind reconnecting.
 * The transport owns the close: no watch opens once its {@code closed} is set, and each is among its
 * {@code inFlight} calls until it ends. Thread-safe: a watch's cancel and its opening meet under that watch's own
 * guard.
 */
final class LeaseWatch {

  private static final Logger LOG = LoggerFactory.getLogger(LeaseWatch.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final ExecutorService io;
  private final AtomicBoolean closed;
  private final Set<Call> inFlight;

  /**
   * Watches of the Lease {@code namespace/name} through {@code client}, opened on {@code io}; {@code closed} and
   * {@code inFlight} are the transport's.
   */
  LeaseWatch(KubernetesClient client, String namespace, String name, ExecutorService io, AtomicBoolean closed,
      Set<Call> inFlight) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
    this.io = io;
    this.closed = closed;
    this.inFlight = inFlight;
  }

  /**
   * Watches the Lease. fabric8 reconnects a dropped watch by itself, resuming from the last resourceVersion it
   * saw; it reports {@link WatchEvents#closed()} only when it gives up (e.g. 410 Gone). A watch cancelled while it
   * opens is closed as soon as it is open.
   */
  Call open(WatchEvents events) {
    AtomicBoolean over = new AtomicBoolean();
    Watch[] opened = new Watch[1];
    Future<?>[] future = new Future<?>[1];
    Object guard = new Object();
    Call call = new Call() {
      @Override
      public void cancel() {
        over.set(true);
        Watch watch;
        synchronized (guard) {
          watch = opened[0];
          opened[0] = null;
          // Not interrupted: fabric8's watch(), cut short while it opens, leaves its connection manager
          // reconnecting with no Watch returned to close it. Left to open, it is closed right after (below).
          if (future[0] != null) {
            future[0].cancel(false);
          }
        }
        inFlight.remove(this);
        if (watch != null) {
          // Off the caller's thread, which is usually the shared loop: a close that blocks must not hold it.
          Watch opened = watch;
          try {
            io.execute(() -> closeQuietly(opened));
          } catch (RejectedExecutionException e) {
            closeQuietly(opened);
          }
        }
      }
    };
    if (closed.get()) {
      return call;
    }
    inFlight.add(call);
    try {
      Future<?> submitted = io.submit(() -> {
        Watch watch;
        try {
          watch = client.leases().inNamespace(namespace).withName(name).watch(new Watcher<Lease>() {
            @Override
            public void eventReceived(Action action, Lease lease) {
              if (over.get()) {
                return;
              }
              if (action == Action.DELETED) {
                events.changed(null);
              } else if (action == Action.ADDED || action == Action.MODIFIED) {
                events.changed(LeaseRecords.record(lease));
              }
            }

            @Override
            public void onClose(WatcherException cause) {
              LOG.debug("Watch of Lease {}/{} closed: {}", namespace, name, cause.getMessage());
              // Given up by fabric8: nothing is left to close, and the elector opens a new watch (a new call).
              inFlight.remove(call);
              if (over.compareAndSet(false, true)) {
                events.closed();
              }
            }
          });
        } catch (RuntimeException | LinkageError failed) {
          LOG.debug("Watch of Lease {}/{} could not start: {}", namespace, name, failed.toString());
          inFlight.remove(call);
          if (over.compareAndSet(false, true)) {
            events.closed();
          }
          return;
        }
        synchronized (guard) {
          if (!over.get()) {
            opened[0] = watch;
            watch = null;
          }
        }
        if (watch != null) {
          // Cancelled (or closed) while it opened: it must not stay behind, reconnecting.
          closeQuietly(watch);
          return;
        }
        events.opened();
      });
      synchronized (guard) {
        future[0] = submitted;
      }
    } catch (RejectedExecutionException e) {
      inFlight.remove(call);
      over.set(true);
      events.closed();
    }
    return call;
  }

  private void closeQuietly(Watch watch) {
    if (watch == null) {
      return;
    }
    try {
      watch.close();
    } catch (RuntimeException e) {
      LOG.debug("Closing the watch of Lease {}/{} failed: {}", namespace, name, e.toString());
    }
  }
}
