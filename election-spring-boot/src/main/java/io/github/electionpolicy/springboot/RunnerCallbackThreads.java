package io.github.electionpolicy.springboot;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import java.time.Duration;
import java.util.Optional;

/**
 * The threads a runner's own callbacks run on, so that {@link ElectionLifecycle} can tell a {@code start()} or
 * {@code stop()} that one of the runner's services or listeners makes from one that any other thread makes: the
 * lifecycle's own start or stop may be waiting for that very callback, and must not wait for it in turn.
 *
 * <p>The runner's services run on one lane and its listeners hear their events on another; each lane names its
 * thread for its runner while it runs a task. The services are wrapped by {@link #noted(LeaderService)} and the
 * {@link #listener()} goes first among the listeners: each notes the thread (and its name) it last ran on, and
 * {@link #isCurrentThread()} matches both, so a pooled thread that runs something else since is not taken for a
 * callback.
 *
 * <p>Thread-safe: every field is volatile, written by the runner's lanes and by {@link #forget()}, read by any
 * thread; each thread is written after its name, and read before it.
 */
final class RunnerCallbackThreads {

  // The thread the runner's listeners heard their last event on, and its name then (the listeners' lane names it for
  // the runner while it delivers an event): a start() from it while a stop() closes that runner would wait for the
  // stop, which waits for the listener. Written by the runner's first listener.
  private volatile Thread listenerThread;
  private volatile String listenerThreadName;
  // The same for the runner's services, whose start and stop run on their own lane.
  private volatile Thread serviceThread;
  private volatile String serviceThreadName;

  /** Forgets the threads noted so far, before a start builds the next runner. */
  void forget() {
    listenerThread = null;
    serviceThread = null;
  }

  /**
   * Whether this thread runs one of the runner's services or delivers an event to its listeners now: a task of the
   * runner's services' or listeners' lane, which names the thread for its runner while it runs.
   */
  boolean isCurrentThread() {
    Thread current = Thread.currentThread();
    return current == listenerThread && current.getName().equals(listenerThreadName)
        || current == serviceThread && current.getName().equals(serviceThreadName);
  }

  /** {@code service}, noting the thread its {@code start} and {@code stop} run on. */
  LeaderService noted(LeaderService service) {
    return new NotedService(service);
  }

  /** The listener to add first to the runner, so that it notes the thread before any other listener hears the event. */
  ElectionListener listener() {
    return new ListenerThreadNote();
  }

  /** A service of the runner: notes the thread (and its name) its {@code start} and {@code stop} run on. */
  private final class NotedService implements LeaderService {
    private final LeaderService service;

    NotedService(LeaderService service) {
      this.service = service;
    }

    @Override
    public void start(LeadershipTerm term) throws Exception {
      note();
      service.start(term);
    }

    @Override
    public void stop() throws Exception {
      note();
      service.stop();
    }

    private void note() {
      Thread current = Thread.currentThread();
      serviceThreadName = current.getName();
      serviceThread = current;
    }

    @Override
    public String toString() {
      return service.toString();
    }
  }

  /**
   * The runner's first listener: notes the thread (and its name) each event is delivered on. Not {@code renewed}: the
   * runner hands renewals only to the listeners that override it.
   */
  private final class ListenerThreadNote implements ElectionListener {
    @Override
    public void stateChanged(ElectionState previous, ElectionState current) {
      note();
    }

    @Override
    public void following(Optional<String> leader) {
      note();
    }

    @Override
    public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
      note();
    }

    private void note() {
      Thread current = Thread.currentThread();
      listenerThreadName = current.getName();
      listenerThread = current;
    }
  }
}
