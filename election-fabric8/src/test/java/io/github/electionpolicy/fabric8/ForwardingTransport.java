package io.github.electionpolicy.fabric8;

import java.util.Optional;
import java.util.function.Consumer;

/** A {@link LeaseTransport} that forwards every call; tests override the calls they break. */
class ForwardingTransport implements LeaseTransport {

  private final LeaseTransport delegate;

  ForwardingTransport(LeaseTransport delegate) {
    this.delegate = delegate;
  }

  @Override
  public Call read(Answered done) {
    return delegate.read(done);
  }

  @Override
  public Call create(LeaseRecord record, Answered done) {
    return delegate.create(record, done);
  }

  @Override
  public Call update(LeaseRecord record, Answered done) {
    return delegate.update(record, done);
  }

  @Override
  public Call delete(LeaseRecord released, Answered done) {
    return delegate.delete(released, done);
  }

  @Override
  public Call watch(WatchEvents events) {
    return delegate.watch(events);
  }

  @Override
  public Call preflight(Consumer<Optional<LeaseAccessDeniedException>> done, Consumer<Throwable> failed) {
    return delegate.preflight(done, failed);
  }

  @Override
  public void firstAttemptOver() {
    delegate.firstAttemptOver();
  }

  @Override
  public void recordEvent(LeadershipEvent event, Runnable done) {
    delegate.recordEvent(event, done);
  }

  @Override
  public void close() {
    delegate.close();
  }
}
