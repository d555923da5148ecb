package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Carries out the commands {@link RunnerLifecycle} returns, for one runner's {@link LifecycleDriver}: user code
 * (the services' start and stop, the loss handler, the exiter) goes off the loop through {@link RunnerCallbacks},
 * Lease calls through the {@link LeaseElector}, the RBAC preflight through the {@link LeaseTransport}, the stop's
 * deadline is a loop timer that comes back as {@code StopDeadline}, and the lifecycle's log lines go to the
 * runner's {@link RunnerLog}. Publishing a state and reporting {@code STOPPED} go back to the driver, which owns
 * the runner's state. It owns the stop's deadline timer, the preflight's call and whether the exiter was called.
 *
 * <p>Not thread-safe: every method runs on the runner's loop, the shared {@link RunnerLoop}; what it hands to
 * other threads comes back as inputs through the driver.
 */
final class LifecycleCommands {

  private final LifecycleDriver driver;
  private final RunnerCallbacks callbacks;
  // Null when the runner does not contend.
  private final LeaseElector elector;
  private final Optional<LeaseTransport> transport;
  private final LossPolicy policy;
  private final String lease;
  private final Duration stopTimeout;
  private final RunnerLog log;
  private final CompletableFuture<Optional<Throwable>> startCompleted;

  private RunnerLoop.Timer stopTimer;
  private LeaseTransport.Call preflightCall;
  private boolean exited;

  LifecycleCommands(LifecycleDriver driver, RunnerCallbacks callbacks, LeaseElector elector,
      Optional<LeaseTransport> transport, LossPolicy policy, String lease, Duration stopTimeout, RunnerLog log,
      CompletableFuture<Optional<Throwable>> startCompleted) {
    this.driver = driver;
    this.callbacks = callbacks;
    this.elector = elector;
    this.transport = transport;
    this.policy = policy;
    this.lease = lease;
    this.stopTimeout = stopTimeout;
    this.log = log;
    this.startCompleted = startCompleted;
  }

  /** Carries out {@code command}; see the class comment for where each kind goes. */
  void execute(RunnerLifecycleCommand command) {
    // The kinds are distinct records, so the order of these tests changes nothing but which classes a test loads:
    // an instanceof loads its class, so the first command of a start (which sends the first read) comes first, and
    // a fresh JVM's first request waits for no command class it does not use (issue 16).
    if (command instanceof RunnerLifecycleCommand.StartElectorWritesHeld) {
      elector.start(true);
    } else if (command instanceof RunnerLifecycleCommand.RunPreflight) {
      preflightCall = transport.orElseThrow().preflight(
          denied -> driver.onLoop(() -> driver.feed(new RunnerLifecycleInput.PreflightDone(denied))),
          failure -> driver.onLoop(() -> {
            log.error("The RBAC preflight for Lease {} failed; not contending", lease, failure);
            driver.feed(new RunnerLifecycleInput.ElectionFailed(failure));
          }));
    } else if (command instanceof RunnerLifecycleCommand.Publish publish) {
      driver.publish(publish.state());
    } else if (command instanceof RunnerLifecycleCommand.StartServices start) {
      callbacks.startServices(start.term());
    } else if (command instanceof RunnerLifecycleCommand.StopServices stop) {
      stopServices(stop.stop());
    } else if (command instanceof RunnerLifecycleCommand.EndTerm end) {
      end.term().end();
    } else if (command instanceof RunnerLifecycleCommand.StartElector) {
      driver.accessAllowed(); // first: what it opens (a sharded replica's list) goes out before the elector's read
      elector.start(false);
    } else if (command instanceof RunnerLifecycleCommand.AllowWrites) {
      driver.accessAllowed();
      elector.allowWrites();
    } else if (command instanceof RunnerLifecycleCommand.AbandonElector) {
      elector.abandon();
    } else if (command instanceof RunnerLifecycleCommand.CloseElector) {
      elector.close();
    } else if (command instanceof RunnerLifecycleCommand.FinishElector finish) {
      elector.finish(finish.release());
    } else if (command instanceof RunnerLifecycleCommand.Relinquish relinquish) {
      elector.relinquish(relinquish.term(), relinquish.release());
    } else if (command instanceof RunnerLifecycleCommand.ElectorAfterLoss after) {
      elector.afterLoss(after.contendAgain());
    } else if (command instanceof RunnerLifecycleCommand.CallLossHandler call) {
      callbacks.callLossHandler(((LossPolicy.Custom) policy).handler(), call.term());
    } else if (command instanceof RunnerLifecycleCommand.Exit exit) {
      exit(exit.why());
    } else if (command instanceof RunnerLifecycleCommand.StartCompleted completed) {
      driver.publishView(); // the caller of start() reads health() as soon as it returns
      startCompleted.complete(completed.failure());
    } else if (command instanceof RunnerLifecycleCommand.Log line) {
      log(line);
    } else if (command instanceof RunnerLifecycleCommand.ReportStopped report) {
      driver.reportStopped(report.cause(), report.failure());
    } else {
      throw new IllegalStateException("unknown command " + command);
    }
  }

  private void stopServices(int number) {
    // The deadline first: if the pool refuses the stop (see handOver), the lifecycle, which already counts the
    // stop as in flight, still hears StopDeadline while the hand-over is retried.
    if (stopTimer != null) {
      stopTimer.cancel();
    }
    stopTimer = driver.onLoopAfter(Durations.cappedNanos(stopTimeout),
        () -> driver.feed(new RunnerLifecycleInput.StopDeadline(number)));
    callbacks.stopServices();
  }

  private void exit(String why) {
    if (exited) {
      driver.onLoop(() -> driver.feed(new RunnerLifecycleInput.Exited()));
      return;
    }
    exited = true;
    log.error("{} {}; exiting with status {} (loss policy EXIT)", why, lease, LossPolicy.LOSS_EXIT_STATUS);
    callbacks.exit(((LossPolicy.Exit) policy).exiter());
  }

  private void log(RunnerLifecycleCommand.Log line) {
    switch (line.level()) {
      case INFO -> log.info("{}", line.message());
      case WARN -> log.warn("{}", line.message());
      case ERROR -> log.error("{}", line.message());
    }
  }

  /** The runner stopped: the stop's deadline and the preflight's call are cancelled. */
  void cancelCalls() {
    if (stopTimer != null) {
      stopTimer.cancel();
      stopTimer = null;
    }
    if (preflightCall != null) {
      preflightCall.cancel();
    }
  }
}
