package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Watch;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The follower's watch of the Lease, turned into protocol inputs: opened, closed, and each event dated when
 * it arrived. Only the newest event waits to be taken in. A watch that fails to start or ends is started
 * again after one retry period, doubling up to the lease duration. Callbacks come on fabric8's threads;
 * everything is guarded by the elector's lock, which they notify.
 */
final class LeaseWatch {

  private static final Logger LOG = LoggerFactory.getLogger(LeaseElector.class);

  /** A watch input for the protocol. */
  sealed interface Input {
    LeaseStep deliverTo(LeaseProtocol protocol, Moment now);
  }

  private record Opened() implements Input {
    @Override
    public LeaseStep deliverTo(LeaseProtocol protocol, Moment now) {
      return protocol.watchOpened(now);
    }
  }

  private record Closed() implements Input {
    @Override
    public LeaseStep deliverTo(LeaseProtocol protocol, Moment now) {
      return protocol.watchClosed(now);
    }
  }

  private record Event(LeaseRecord record, long arrivedNanos) implements Input {
    @Override
    public LeaseStep deliverTo(LeaseProtocol protocol, Moment now) {
      return protocol.watchEvent(now, arrivedNanos, record);
    }
  }

  private final LeaseRequests requests;
  private final Object lock;
  private final Ticker ticker;
  private final long retryPeriodNanos;
  private final long leaseDurationNanos;
  private final String lease;

  // Guarded by lock.
  private Future<Watch> watch;
  // Each watch started has a number; callbacks of an older one are ignored.
  private int generation;
  private boolean open;
  private boolean closedPending;
  private boolean openedPending;
  private Event pendingEvent;
  private int failures;
  private long nextStartNanos;

  LeaseWatch(LeaseRequests requests, Object lock, Ticker ticker, LeaseSettings settings, String lease) {
    this.requests = requests;
    this.lock = lock;
    this.ticker = ticker;
    this.retryPeriodNanos = settings.retryPeriod().toNanos();
    this.leaseDurationNanos = settings.leaseDuration().toNanos();
    this.lease = lease;
    this.nextStartNanos = ticker.read();
  }

  /** Starts a watch unless one runs, is starting, or waits out its backoff. */
  void ensureRunning(boolean closing) {
    synchronized (lock) {
      if (watch != null && watch.isDone()) {
        try {
          watch.get();
        } catch (ExecutionException | CancellationException failed) {
          LOG.debug("Watch of Lease {} could not start: {}", lease, failed.getMessage());
          ended();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (watch == null && !closing && ticker.read() - nextStartNanos >= 0) {
        int mine = ++generation;
        watch = requests.watch(new LeaseRequests.WatchListener() {
          @Override
          public void opened() {
            synchronized (lock) {
              if (mine == generation && watch != null) {
                open = true;
                openedPending = true;
                failures = 0;
                lock.notifyAll();
              }
            }
          }

          @Override
          public void changed(Lease changed) {
            long arrived = ticker.read();
            LeaseRecord record = changed == null ? null : LeaseRecords.record(changed);
            synchronized (lock) {
              if (mine == generation) {
                pendingEvent = new Event(record, arrived);
                lock.notifyAll();
              }
            }
          }

          @Override
          public void closed() {
            synchronized (lock) {
              if (mine == generation) {
                ended();
                lock.notifyAll();
              }
            }
          }
        });
      }
    }
  }

  /** The next input for the protocol, if any; called holding the lock. */
  Input takeInput() {
    if (closedPending) {
      closedPending = false;
      return new Closed();
    }
    if (openedPending) {
      openedPending = false;
      return new Opened();
    }
    Event event = pendingEvent;
    pendingEvent = null;
    return event;
  }

  /** Forgets the ended watch and sets when the next may start; called holding the lock. */
  private void ended() {
    watch = null;
    if (open) {
      open = false;
      closedPending = true;
    }
    openedPending = false;
    long backoff = Math.min(leaseDurationNanos, retryPeriodNanos << Math.min(failures, 20));
    failures++;
    nextStartNanos = ticker.read() + backoff;
  }

  /** Stops the watch; the protocol hears that it closed. */
  void stop() {
    Future<Watch> current;
    synchronized (lock) {
      current = watch;
      watch = null;
      if (open) {
        open = false;
        closedPending = true;
      }
      openedPending = false;
      pendingEvent = null;
      // Callbacks of the stopped watch must not count.
      generation++;
    }
    if (current == null) {
      return;
    }
    if (!current.cancel(true) && current.isDone()) {
      try {
        current.get().close();
      } catch (ExecutionException | RuntimeException failed) {
        LOG.debug("Watch of Lease {} had failed: {}", lease, failed.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
