package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Holds the current {@link ElectionState} and tells listeners, in order, on a thread of its own. */
final class StatePublisher {

  private static final Logger LOG = LoggerFactory.getLogger(ElectedReconcilers.class);

  private final List<ElectionListener> listeners;
  private final ExecutorService events;
  private volatile ElectionState current;

  StatePublisher(List<ElectionListener> listeners, ElectionState initial) {
    this.listeners = listeners;
    this.current = initial;
    this.events = Executors.newSingleThreadExecutor(task -> {
      Thread t = new Thread(task, "election-events");
      t.setDaemon(true);
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

  void shutdown() {
    events.shutdown();
  }
}
