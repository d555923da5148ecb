package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.RunnerLifecycleCommand.Publish;
import io.github.electionpolicy.fabric8.RunnerLifecycleCommand.StopServices;
import io.github.electionpolicy.fabric8.RunnerLifecyclePhase.Created;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything one {@link RunnerLifecycle} remembers between inputs, in the way of Guava's {@code AbstractService}:
 * the {@link RunnerLifecyclePhase}, the services' state, and the few facts a later input needs (a close was asked
 * for, the elector is done, a {@link VirtualMachineError} was thrown, a stop failure not yet reported, the term in
 * force, the state last published), with the commands of the step under way. It also owns the two pieces of
 * bookkeeping every rule shares: emitting a command, and stopping the services under a numbered deadline.
 *
 * <p>Pure: no thread, lock, clock or logger. The rules that change it live beside it, by what they decide:
 * {@link RunnerLifecycle} (starting, electing, the entry point), {@link RunnerLifecycleClosing},
 * {@link RunnerLifecycleLoss}, {@link RunnerLifecycleStopping} and {@link RunnerLifecycleEnding}. Only those
 * classes touch its fields. Not thread-safe: one caller at a time (the runner's loop).
 */
final class RunnerLifecycleState {

  final RunnerLifecycleConfig config;
  final RunnerLifecycleLines lines;
  RunnerLifecyclePhase phase = new Created();
  RunnerLifecycleServices services = RunnerLifecycleServices.IDLE;
  boolean closeRequested;
  // The owner closed the runner while a loss was handled: once the loss policy answers, it closes unless it stops.
  boolean closeAfterLoss;
  boolean electorDone;
  boolean fatal;
  // A stop failure not yet counted by a stop the lifecycle waits for (stops made by a start that failed or
  // whose term ended).
  boolean unreportedUnclean;
  int stopNumber;
  LeadershipTerm term;
  LeadershipTerm lastLostTerm;
  // Whether a service's stop failed after the loss the handler is asked about: then it may not contend again.
  boolean lossUnclean;
  // A leader's start failed: once the services it started have stopped, the term is given up.
  boolean relinquishAfterStop;
  ElectionState published = new ElectionState.Starting();
  // Whom the elector followed while the preflight ran (null: it said nothing yet), published once it may contend.
  Optional<String> followedInPreflight;
  List<RunnerLifecycleCommand> out;

  RunnerLifecycleState(RunnerLifecycleConfig config) {
    this.config = Objects.requireNonNull(config, "config");
    this.lines = new RunnerLifecycleLines(config);
  }

  void stopServices() {
    services = RunnerLifecycleServices.STOPPING;
    stopNumber++;
    emit(new StopServices(stopNumber));
  }

  void emit(RunnerLifecycleCommand command) {
    if (command instanceof Publish publish) {
      published = publish.state();
    }
    out.add(command);
  }
}
