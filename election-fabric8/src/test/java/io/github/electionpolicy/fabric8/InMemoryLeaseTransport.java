package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A {@link LeaseTransport} over the simulation's {@link SimApiServer}, in memory and without threads of its own:
 * every call is answered at once on the calling thread (the runner takes answers onto its loop anyway), every
 * change reaches the open watches the same way, and the preflight grants. For explorations of the runner's threads
 * in which no HTTP client may take part. Thread-safe (one lock).
 */
final class InMemoryLeaseTransport implements LeaseTransport {

  private final List<WatchEvents> watches = new ArrayList<>();
  private final SimApiServer server = new SimApiServer(this::changed);
  private final boolean preflightAnswers;
  private boolean closed;
  private int callsAfterClose;

  /** A transport whose preflight grants at once. */
  InMemoryLeaseTransport() {
    this(true);
  }

  /** @param preflightAnswers false: the preflight never answers (the runner stays STARTING until closed) */
  InMemoryLeaseTransport(boolean preflightAnswers) {
    this.preflightAnswers = preflightAnswers;
  }

  /** The Lease as the server holds it ({@code null}: none). */
  synchronized LeaseRecord lease() {
    return server.current();
  }

  /** How many Lease calls or watches were made after {@link #close()}: a runner must make none. */
  synchronized int callsAfterClose() {
    return callsAfterClose;
  }

  /** Another replica takes the Lease over (an operator's edit, as far as this runner can tell). */
  synchronized void takenBy(String holder, int seconds, java.time.Instant now) {
    server.foreignEditHolder(holder, seconds, now);
  }

  @Override
  public Call read(Answered done) {
    return call(done, SimApiServer::get);
  }

  @Override
  public Call create(LeaseRecord record, Answered done) {
    return call(done, s -> s.create(record));
  }

  @Override
  public Call delete(LeaseRecord released, Answered done) {
    throw new UnsupportedOperationException("an election's Lease is never deleted");
  }

  @Override
  public Call update(LeaseRecord record, Answered done) {
    return call(done, s -> s.update(record));
  }

  private Call call(Answered done, Function<SimApiServer, Answer> request) {
    Answer answer;
    synchronized (this) {
      if (closed) {
        callsAfterClose++;
        return () -> { };
      }
      answer = request.apply(server);
    }
    done.answered(answer, failure(answer));
    return () -> { };
  }

  private static Throwable failure(Answer answer) {
    if (!(answer instanceof Answer.Failed failed)) {
      return null;
    }
    int code = failed.kind() == LeaseStep.FailureKind.CONFLICT ? LeaseCallFailed.CONFLICT
        : failed.kind() == LeaseStep.FailureKind.NOT_FOUND ? LeaseCallFailed.NOT_FOUND : 503;
    return new LeaseCallFailed(failed.failure(), null, code);
  }

  @Override
  public Call watch(WatchEvents events) {
    synchronized (this) {
      if (closed) {
        callsAfterClose++;
        return () -> { };
      }
      watches.add(events);
    }
    events.opened();
    return () -> {
      synchronized (InMemoryLeaseTransport.this) {
        watches.remove(events);
      }
    };
  }

  // Called by the server under this transport's lock (every server call is made holding it).
  private void changed(LeaseRecord record) {
    for (WatchEvents events : List.copyOf(watches)) {
      events.changed(record);
    }
  }

  @Override
  public Call preflight(Consumer<Optional<LeaseAccessDeniedException>> done, Consumer<Throwable> failed) {
    if (preflightAnswers) {
      done.accept(Optional.empty());
    }
    return () -> { };
  }

  /** Leadership Events are not kept: answered at once, as written (not a Lease call, so not counted after close). */
  @Override
  public void recordEvent(LeadershipEvent event, Runnable done) {
    done.run();
  }

  @Override
  public synchronized void close() {
    closed = true;
    watches.clear();
  }
}
