package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds the current {@link ElectionState} and tells listeners, in order, on a thread of its own: each change
 * through {@code stateChanged}, and each new {@link ElectionState.Following} also through {@code following}.
 */
final class StatePublisher {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  private final List<ElectionListener> listeners;
  private final ExecutorService events;
  private volatile ElectionState current;
  private volatile Thread eventsThread;

  StatePublisher(List<ElectionListener> listeners, ElectionState initial, String threadName) {
    this.listeners = listeners;
    this.current = initial;
    this.events = Executors.newSingleThreadExecutor(task -> {
      Thread t = new Thread(task, threadName);
      t.setDaemon(true);
      eventsThread = t;
      return t;
    });
  }

  ElectionState current() {
    return current;
  }

  /** Moves to {@code next} unless already there or stopped for good. */
  synchronized void publish(ElectionState next) {
    ElectionState previous = current;
    if (previous.equals(next) || previous.kind() == ElectionState.Kind.STOPPED) {
      return;
    }
    current = next;
    if (next instanceof ElectionState.Following && ((ElectionState.Following) next).leader().isPresent()) {
      LOG.info("Following leader {}", ((ElectionState.Following) next).leader().get());
    }
    dispatch(listener -> listener.stateChanged(previous, next));
    if (next instanceof ElectionState.Following following) {
      dispatch(listener -> listener.following(following.leader()));
    }
  }

  void renewed(Duration roundTrip) {
    dispatch(listener -> listener.renewed(roundTrip));
  }

  void renewFailed(Throwable cause, Duration sinceLastRenewal) {
    dispatch(listener -> listener.renewFailed(cause, sinceLastRenewal));
  }

  private void dispatch(java.util.function.Consumer<ElectionListener> call) {
    if (listeners.isEmpty()) {
      return;
    }
    try {
      events.execute(() -> {
        for (ElectionListener listener : listeners) {
          try {
            call.accept(listener);
          } catch (RuntimeException e) {
            LOG.warn("Election listener {} failed", listener, e);
          }
        }
      });
    } catch (RejectedExecutionException closed) {
      LOG.debug("Listener event dropped: the runner is closed");
    }
  }

  /** Lets the events already queued reach the listeners, then ends the thread. */
  void shutdown() {
    events.shutdown();
  }

  /** Waits until the thread ended after {@link #shutdown()}; true at once on that thread (a listener). */
  boolean awaitTermination(long timeoutNanos) throws InterruptedException {
    if (Thread.currentThread() == eventsThread) {
      return true;
    }
    return events.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
  }
}
