package io.github.electionpolicy.fabric8;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The vocabulary of {@code RunnerLifecycleStepTest}: named phases (each reached from a new lifecycle by a list of
 * inputs), named inputs, and a one-line rendering of commands and phases, so that a row of the table reads as
 * "in this phase, this input leads to these commands and that phase".
 */
final class RunnerLifecycleTable {

  static final String LEASE = "ns/lease";
  static final LeadershipTerm TERM = LeadershipTerm.elected("me", 3, Instant.EPOCH, "7", () -> 0L, Long.MAX_VALUE);
  static final LeadershipTerm NEXT_TERM = LeadershipTerm.elected("me", 4, Instant.EPOCH, "9", () -> 0L,
      Long.MAX_VALUE);
  static final LeadershipTerm UNELECTED = LeadershipTerm.unelected("me", Instant.EPOCH, () -> 0L);
  static final LeaseAccessDeniedException DENIED = new LeaseAccessDeniedException("ns", "lease", List.of("update"));
  static final Throwable BUG = new IllegalStateException("a bug");

  /** The inputs, by name. Fresh terms are not needed: the lifecycle compares none. */
  static final Map<String, Supplier<RunnerLifecycleInput>> INPUTS = new LinkedHashMap<>();

  static {
    INPUTS.put("start", () -> new RunnerLifecycleInput.Start(Optional.empty()));
    INPUTS.put("preflight ok", () -> new RunnerLifecycleInput.PreflightDone(Optional.empty()));
    INPUTS.put("preflight denied", () -> new RunnerLifecycleInput.PreflightDone(Optional.of(DENIED)));
    INPUTS.put("followed x", () -> new RunnerLifecycleInput.Followed(Optional.of("x")));
    INPUTS.put("elected", () -> new RunnerLifecycleInput.Elected(NEXT_TERM));
    INPUTS.put("lost", () -> new RunnerLifecycleInput.Lost(TERM));
    INPUTS.put("elector finished", RunnerLifecycleInput.ElectorFinished::new);
    INPUTS.put("close", RunnerLifecycleInput.CloseRequested::new);
    INPUTS.put("owner close", RunnerLifecycleInput.OwnerCloseRequested::new);
    INPUTS.put("started", () -> new RunnerLifecycleInput.ServicesStarted(ServiceSequence.StartKind.STARTED, false,
        Optional.empty()));
    INPUTS.put("start term ended", () -> new RunnerLifecycleInput.ServicesStarted(ServiceSequence.StartKind.TERM_ENDED,
        false, Optional.empty()));
    INPUTS.put("start failed", () -> new RunnerLifecycleInput.ServicesStarted(ServiceSequence.StartKind.FAILED, false,
        Optional.of(BUG)));
    INPUTS.put("start threw VME", () -> new RunnerLifecycleInput.ServicesStarted(ServiceSequence.StartKind.FAILED, true,
        Optional.of(new OutOfMemoryError())));
    INPUTS.put("stopped", () -> new RunnerLifecycleInput.ServicesStopped(true, false));
    INPUTS.put("stop threw", () -> new RunnerLifecycleInput.ServicesStopped(false, false));
    INPUTS.put("stop threw VME", () -> new RunnerLifecycleInput.ServicesStopped(false, true));
    INPUTS.put("deadline", () -> new RunnerLifecycleInput.StopDeadline(1));
    INPUTS.put("handled: again", () -> new RunnerLifecycleInput.LossHandled(true));
    INPUTS.put("handled: stop", () -> new RunnerLifecycleInput.LossHandled(false));
    INPUTS.put("exited", RunnerLifecycleInput.Exited::new);
    INPUTS.put("failed", () -> new RunnerLifecycleInput.ElectionFailed(BUG));
  }

  /** A phase to start a row from: the policy and the inputs that lead there from a new lifecycle. */
  record Setup(boolean contends, LossPolicy.Kind policy, List<String> inputs) {}

  static final Map<String, Setup> SETUPS = new LinkedHashMap<>();

  static {
    setup("created", LossPolicy.Kind.RECONTEND);
    setup("unelected starting", false, LossPolicy.Kind.EXIT, "start");
    setup("unelected", false, LossPolicy.Kind.EXIT, "start", "started");
    setup("unelected closing", false, LossPolicy.Kind.EXIT, "start", "started", "close");
    setup("preflight", LossPolicy.Kind.RECONTEND, "start");
    setup("preflight, EXIT", LossPolicy.Kind.EXIT, "start");
    setup("contending", LossPolicy.Kind.RECONTEND, "start", "preflight ok");
    setup("leading, starting", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected");
    setup("leading", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected", "started");
    setup("leading, EXIT", LossPolicy.Kind.EXIT, "start", "preflight ok", "elected", "started");
    setup("leading, CUSTOM", LossPolicy.Kind.CUSTOM, "start", "preflight ok", "elected", "started");
    setup("leading, start failed", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected", "start failed");
    setup("leading, start failed, stopped", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected",
        "start failed", "stopped");
    setup("unelected, start failed", false, LossPolicy.Kind.EXIT, "start", "start failed");
    setup("stopping: close", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected", "started", "close");
    setup("stopping: loss", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected", "started", "lost");
    setup("stopping: loss, EXIT", LossPolicy.Kind.EXIT, "start", "preflight ok", "elected", "started", "lost");
    setup("stopping: loss, CUSTOM", LossPolicy.Kind.CUSTOM, "start", "preflight ok", "elected", "started", "lost");
    setup("stopping: failed", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected", "started", "failed");
    setup("handling loss", LossPolicy.Kind.CUSTOM, "start", "preflight ok", "elected", "started", "lost",
        "stopped");
    setup("exiting", LossPolicy.Kind.EXIT, "start", "preflight ok", "elected", "started", "lost", "stopped");
    setup("finishing: closed", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected", "started", "close",
        "stopped");
    setup("finishing: hung", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected", "started", "lost",
        "deadline");
    setup("stopped", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected", "started", "close", "stopped",
        "elector finished");
    // Phases that differ from the ones above only in what the lifecycle remembers: the fatal flag, a stop failure
    // not yet reported, a hung stop after a failed start, a start still in flight during a close.
    setup("created, unelected", false, LossPolicy.Kind.EXIT);
    setup("unelected starting, closing", false, LossPolicy.Kind.EXIT, "start", "close");
    setup("leading, start threw VME", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected",
        "start threw VME");
    setup("leading, start threw VME, stopped", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected",
        "start threw VME", "stopped");
    setup("leading, start failed, stop threw", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected",
        "start failed", "stop threw");
    setup("leading, start failed, hung, CUSTOM", LossPolicy.Kind.CUSTOM, "start", "preflight ok", "elected",
        "start failed", "deadline");
    // The elector's first read answered before the access reviews did.
    setup("preflight, followed", LossPolicy.Kind.RECONTEND, "start", "followed x");
    // The owner (a sharded replica's coordinator) closed the runner while its loss was handled: the policy answers.
    setup("stopping: loss, owner closing", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected", "started",
        "lost", "owner close");
    setup("stopping: loss, EXIT, owner closing", LossPolicy.Kind.EXIT, "start", "preflight ok", "elected", "started",
        "lost", "owner close");
    setup("stopping: loss, CUSTOM, owner closing", LossPolicy.Kind.CUSTOM, "start", "preflight ok", "elected",
        "started", "lost", "owner close");
    setup("handling loss, owner closing", LossPolicy.Kind.CUSTOM, "start", "preflight ok", "elected", "started", "lost",
        "stopped", "owner close");
    // The loss's stop threw (no VirtualMachineError): the handler runs, and nothing may release the Lease (h-rev2).
    setup("handling loss, CUSTOM, stop threw", LossPolicy.Kind.CUSTOM, "start", "preflight ok", "elected", "started",
        "lost", "stop threw");
    // The user closed the runner while its loss's stops ran: the FinishElector after them answers the loss, and after
    // clean stops releases what the loss left as this replica wrote it (h-relloss).
    setup("stopping: loss, closing", LossPolicy.Kind.RECONTEND, "start", "preflight ok", "elected", "started", "lost",
        "close");
  }

  private static void setup(String name, LossPolicy.Kind policy, String... inputs) {
    setup(name, true, policy, inputs);
  }

  private static void setup(String name, boolean contends, LossPolicy.Kind policy, String... inputs) {
    SETUPS.put(name, new Setup(contends, policy, List.of(inputs)));
  }

  static RunnerLifecycle reach(String setupName) {
    return reach(setupName, RunnerFlaw.NONE);
  }

  /** The phase {@code setupName} of a lifecycle with a deliberate defect (a broken variant of the simulation). */
  static RunnerLifecycle reach(String setupName, RunnerFlaw flaw) {
    Setup setup = SETUPS.get(setupName);
    RunnerLifecycle lifecycle = new RunnerLifecycle(
        new RunnerLifecycleConfig(setup.contends(), true, setup.policy(), LEASE, "10s", flaw));
    for (String input : setup.inputs()) {
      lifecycle.step(input(setup, input));
    }
    return lifecycle;
  }

  static RunnerLifecycleInput input(Setup setup, String name) {
    if (name.equals("start") && !setup.contends()) {
      return new RunnerLifecycleInput.Start(Optional.of(UNELECTED));
    }
    if (name.equals("elected") && setup.inputs().indexOf("elected") < 0) {
      return new RunnerLifecycleInput.Elected(TERM); // the setup's own term
    }
    Supplier<RunnerLifecycleInput> input = INPUTS.get(name);
    if (input == null) {
      throw new IllegalArgumentException("no input named " + name);
    }
    return input.get();
  }

  /** One row's outcome: the commands, then the phase and the services after. */
  static String outcome(String setupName, String inputName) {
    return outcome(setupName, inputName, RunnerFlaw.NONE);
  }

  /** One row's outcome in a lifecycle with a deliberate defect. */
  static String outcome(String setupName, String inputName, RunnerFlaw flaw) {
    Setup setup = SETUPS.get(setupName);
    RunnerLifecycle lifecycle = reach(setupName, flaw);
    String commands;
    try {
      commands = lifecycle.step(input(setup, inputName)).stream().map(RunnerLifecycleTable::render)
          .collect(Collectors.joining("; "));
    } catch (RuntimeException e) {
      return "throws " + e.getClass().getSimpleName();
    }
    return (commands.isEmpty() ? "-" : commands) + " => " + render(lifecycle.phase()) + ", "
        + lifecycle.services().name().toLowerCase(java.util.Locale.ROOT);
  }

  static String render(RunnerLifecycleCommand command) {
    if (command instanceof RunnerLifecycleCommand.Publish publish) {
      ElectionState state = publish.state();
      String detail = state instanceof ElectionState.Following f ? " " + f.leader().orElse("none")
          : state instanceof ElectionState.Leading l ? " t" + l.term().leaseTransitions()
          : state instanceof ElectionState.Stopped s ? " " + s.cause() : "";
      return "publish " + state.kind() + detail;
    } else if (command instanceof RunnerLifecycleCommand.StartServices start) {
      return "start services" + (start.term().isElected() ? " t" + start.term().leaseTransitions() : " unelected");
    } else if (command instanceof RunnerLifecycleCommand.StopServices stop) {
      return "stop services #" + stop.stop();
    } else if (command instanceof RunnerLifecycleCommand.EndTerm end) {
      return "end term" + (end.term().isElected() ? " t" + end.term().leaseTransitions() : " unelected");
    } else if (command instanceof RunnerLifecycleCommand.RunPreflight) {
      return "preflight";
    } else if (command instanceof RunnerLifecycleCommand.StartElector) {
      return "start elector";
    } else if (command instanceof RunnerLifecycleCommand.StartElectorWritesHeld) {
      return "start elector, writes held";
    } else if (command instanceof RunnerLifecycleCommand.AllowWrites) {
      return "allow writes";
    } else if (command instanceof RunnerLifecycleCommand.AbandonElector) {
      return "abandon elector";
    } else if (command instanceof RunnerLifecycleCommand.CloseElector) {
      return "close elector";
    } else if (command instanceof RunnerLifecycleCommand.FinishElector finish) {
      return finish.release() ? "finish elector: release" : "finish elector: abandon";
    } else if (command instanceof RunnerLifecycleCommand.Relinquish relinquish) {
      return "relinquish t" + relinquish.term().leaseTransitions() + (relinquish.release() ? ": release"
          : ": abandon");
    } else if (command instanceof RunnerLifecycleCommand.ElectorAfterLoss after) {
      return after.contendAgain() ? "contend again" : "end contention";
    } else if (command instanceof RunnerLifecycleCommand.CallLossHandler call) {
      return "call loss handler t" + call.term().leaseTransitions();
    } else if (command instanceof RunnerLifecycleCommand.Exit) {
      return "exit";
    } else if (command instanceof RunnerLifecycleCommand.StartCompleted completed) {
      return completed.failure().isPresent() ? "start completed: failed" : "start completed";
    } else if (command instanceof RunnerLifecycleCommand.Log log) {
      return "log " + log.level();
    } else if (command instanceof RunnerLifecycleCommand.ReportStopped report) {
      return "report stopped " + report.cause();
    }
    throw new IllegalArgumentException(command.toString());
  }

  static String render(RunnerLifecyclePhase phase) {
    if (phase instanceof RunnerLifecyclePhase.Stopping stopping) {
      return "Stopping(" + stopping.reason() + ")";
    } else if (phase instanceof RunnerLifecyclePhase.Exiting exiting) {
      return "Exiting(" + exiting.cause() + ")";
    } else if (phase instanceof RunnerLifecyclePhase.Finishing finishing) {
      return "Finishing(" + finishing.cause() + ")";
    } else if (phase instanceof RunnerLifecyclePhase.Stopped stopped) {
      return "Stopped(" + stopped.cause() + ")";
    }
    return phase.getClass().getSimpleName();
  }

  /** Prints the whole table, for writing the test's rows; run by hand. */
  public static void main(String[] args) {
    List<String> lines = new ArrayList<>();
    for (String setup : SETUPS.keySet()) {
      for (String input : INPUTS.keySet()) {
        lines.add(setup + " | " + input + " | " + outcome(setup, input));
      }
    }
    lines.forEach(System.out::println);
  }

  private RunnerLifecycleTable() {}
}
