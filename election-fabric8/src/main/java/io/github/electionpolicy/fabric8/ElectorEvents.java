package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.Optional;

/**
 * Connects one runner's {@link LeaseElector} to its {@link LifecycleDriver}: what the elector signals becomes an
 * input of {@link RunnerLifecycle} (elected, following, lost, finished) or a listener call (renewed, renew failed,
 * dispatched off the loop through {@link RunnerCallbacks}), and the tasks and timers it asks for become the
 * runner's own tasks on the loop, whose failures end the runner, never the loop.
 *
 * <p>Not thread-safe: every method runs on the runner's loop, the shared {@link RunnerLoop}.
 */
final class ElectorEvents implements ElectorSignals {

  private final LifecycleDriver driver;

  ElectorEvents(LifecycleDriver driver) {
    this.driver = driver;
  }

  @Override
  public void following(Optional<String> holder) {
    driver.feed(new RunnerLifecycleInput.Followed(holder));
  }

  @Override
  public void elected(LeadershipTerm term) {
    driver.feed(new RunnerLifecycleInput.Elected(term));
  }

  @Override
  public void lost(LeadershipTerm term) {
    driver.feed(new RunnerLifecycleInput.Lost(term));
  }

  @Override
  public void renewed(Duration roundTrip) {
    driver.dispatchRenewal(roundTrip);
  }

  @Override
  public void answered() {
    driver.dispatchAnswered();
  }

  @Override
  public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
    driver.dispatch(listener -> listener.renewFailed(cause, sinceLastRenewal));
  }

  @Override
  public void finished() {
    driver.feed(new RunnerLifecycleInput.ElectorFinished());
  }

  @Override
  public void onLoop(Runnable task) {
    driver.onLoop(task);
  }

  @Override
  public RunnerLoop.Timer onLoopAfter(long delayNanos, Runnable task) {
    return driver.onLoopAfter(delayNanos, task);
  }
}
