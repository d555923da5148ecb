package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Review h-rev2 of the owner's close ({@link RunnerLifecycleInput.OwnerCloseRequested}, commits 0b76b0e and 8cd5cfa):
 * pure steps of {@link RunnerLifecycle}, no thread or clock.
 */
class RunnerLifecycleOwnerCloseReviewTest {

  private static RunnerLifecycle handlingALossWhoseStopThrew() {
    RunnerLifecycle lifecycle = new RunnerLifecycle(new RunnerLifecycleConfig(true, true, LossPolicy.Kind.CUSTOM,
        RunnerLifecycleTable.LEASE, "10s", RunnerFlaw.NONE));
    lifecycle.step(new RunnerLifecycleInput.Start(Optional.empty()));
    lifecycle.step(new RunnerLifecycleInput.PreflightDone(Optional.empty()));
    lifecycle.step(new RunnerLifecycleInput.Elected(RunnerLifecycleTable.TERM));
    lifecycle.step(new RunnerLifecycleInput.ServicesStarted(ServiceSequence.StartKind.STARTED, false,
        Optional.empty()));
    lifecycle.step(new RunnerLifecycleInput.Lost(RunnerLifecycleTable.TERM));
    // The loss's stop threw (not a VirtualMachineError): its work may still run; the handler hears of it.
    lifecycle.step(new RunnerLifecycleInput.ServicesStopped(false, false));
    assertThat(lifecycle.phase()).isInstanceOf(RunnerLifecyclePhase.HandlingLoss.class);
    return lifecycle;
  }

  private static List<RunnerLifecycleCommand.FinishElector> finishes(List<RunnerLifecycleCommand> commands) {
    return commands.stream().filter(RunnerLifecycleCommand.FinishElector.class::isInstance)
        .map(RunnerLifecycleCommand.FinishElector.class::cast).collect(Collectors.toList());
  }

  /**
   * FINDING (h-rev2 A): a close while the loss handler runs after a loss whose services' stop threw commanded a
   * release ("finish elector: release"), though rule 6 of docs/reliability.md releases only after every stop returned
   * normally. Reached by an ElectionRunner's close() during the handler, and, since 8cd5cfa, by ShardedRunner.close()
   * after the coordinator's own close (LifecycleDriver.closeIfOwnerClosed). The elector as wired ignores that release
   * (the "end contention" before it ends the elector; CloseDuringLossHandlerReleaseTest), so this is the lifecycle's
   * own contract, not an observed release. Red before the fix (FinishElector(true)).
   */
  @Test
  void aCloseWhileTheHandlerRunsAfterAStopThatThrewLeavesTheLeaseToExpire() {
    RunnerLifecycle lifecycle = handlingALossWhoseStopThrew();

    List<RunnerLifecycleCommand> commands = lifecycle.step(new RunnerLifecycleInput.CloseRequested());

    assertThat(finishes(commands)).containsExactly(new RunnerLifecycleCommand.FinishElector(false));
    assertThat(lifecycle.phase()).isEqualTo(new RunnerLifecyclePhase.Finishing(ElectionState.StopCause.CLOSED,
        Optional.empty()));
  }

  /** The same through the sharded path: the coordinator's close first (it yields), then the user's close. */
  @Test
  void theUsersCloseAfterTheOwnersDuringAHandlerAfterAStopThatThrewLeavesTheLeaseToExpire() {
    RunnerLifecycle lifecycle = handlingALossWhoseStopThrew();
    assertThat(lifecycle.step(new RunnerLifecycleInput.OwnerCloseRequested())).isEmpty();

    List<RunnerLifecycleCommand> commands = lifecycle.step(new RunnerLifecycleInput.CloseRequested());

    assertThat(finishes(commands)).containsExactly(new RunnerLifecycleCommand.FinishElector(false));
  }

  /** And the handler's RECONTEND after the owner's close, after a stop that threw: LOST, nothing released. */
  @Test
  void aHandlersRecontendAfterTheOwnersCloseAndAStopThatThrewReleasesNothing() {
    RunnerLifecycle lifecycle = handlingALossWhoseStopThrew();
    lifecycle.step(new RunnerLifecycleInput.OwnerCloseRequested());

    List<RunnerLifecycleCommand> commands = lifecycle.step(new RunnerLifecycleInput.LossHandled(true));

    assertThat(finishes(commands)).containsExactly(new RunnerLifecycleCommand.FinishElector(false));
    assertThat(lifecycle.phase()).isEqualTo(new RunnerLifecyclePhase.Finishing(ElectionState.StopCause.LOST,
        Optional.empty()));
  }
}
