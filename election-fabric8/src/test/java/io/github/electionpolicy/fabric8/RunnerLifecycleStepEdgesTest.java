package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@link RunnerLifecycle} where its table ({@code runner-lifecycle-steps.txt}, rendered one word per command)
 * cannot look: the text of its log lines (what an operator reads), the settings the table fixes (no preflight, no
 * term to run unelected under), what it tells its driver ({@code fatal()}, {@code toString()}), and the deliberate
 * defects of the simulation's broken variants, each of which must change its own rows and no others. Written
 * against PIT's survivors: each test pins a behaviour that no other pure test observed.
 */
class RunnerLifecycleStepEdgesTest {

  /** The messages of the log lines that {@code inputName} leads to in the phase {@code setupName}. */
  static List<String> logs(String setupName, String inputName) {
    RunnerLifecycle lifecycle = RunnerLifecycleTable.reach(setupName);
    return lifecycle.step(RunnerLifecycleTable.input(RunnerLifecycleTable.SETUPS.get(setupName), inputName))
        .stream().filter(RunnerLifecycleCommand.Log.class::isInstance)
        .map(command -> ((RunnerLifecycleCommand.Log) command).message()).collect(Collectors.toList());
  }

  @Test
  void aFailedStartGivenUpWithoutReleaseSaysWhy() {
    assertThat(logs("leading, start threw VME", "stopped")).singleElement().asString()
        .startsWith("After the failed start, a VirtualMachineError was thrown: giving up the term without releasing"
            + " Lease ns/lease; another replica takes over once it expires");
    assertThat(logs("leading, start failed", "deadline")).singleElement().asString()
        .startsWith("After the failed start, a service did not stop within 10s: giving up");
    assertThat(logs("leading, start failed", "stop threw")).singleElement().asString()
        .startsWith("After the failed start, a service failed to stop: giving up");
  }

  @Test
  void aCloseWhoseStopFailedSaysWhetherTheLeaseIsLeftToExpire() {
    assertThat(logs("stopping: close", "deadline")).containsExactly(
        "Services did not stop within 10s; leaving the Lease to expire instead of releasing it (Lease ns/lease)");
    assertThat(logs("stopping: close", "stop threw")).containsExactly(
        "A service failed to stop; leaving the Lease to expire instead of releasing it (Lease ns/lease)");
    assertThat(logs("unelected closing", "stop threw")).as("unelected: there is no Lease to leave")
        .containsExactly("A service failed to stop (ns/lease)");
  }

  @Test
  void aLossWhoseStopFailedSaysWhatFollows() {
    assertThat(logs("stopping: loss, EXIT", "deadline")).containsExactly(
        "Services did not stop within 10s after the loss of Lease ns/lease; exiting anyway");
    assertThat(logs("stopping: loss, EXIT", "stop threw")).containsExactly(
        "A service failed to stop after the loss of Lease ns/lease; exiting anyway");
    assertThat(logs("stopping: loss", "deadline")).singleElement().asString().startsWith(
        "A service did not stop within 10s after the loss of Lease ns/lease: not contending again");
    assertThat(logs("stopping: loss", "stop threw")).singleElement().asString().startsWith(
        "A service did not stop cleanly after the loss of Lease ns/lease: not contending again");
    assertThat(logs("leading, start threw VME, stopped", "lost")).containsExactly(
        "A service threw a VirtualMachineError: not contending again for Lease ns/lease; restart the process");
  }

  @Test
  void aStartThatReturnsAfterItsClosesStopOutlivedTheDeadlineStillCompletesStart() {
    RunnerLifecycle lifecycle = RunnerLifecycleTable.reach("unelected starting, closing");
    lifecycle.step(new RunnerLifecycleInput.StopDeadline(1));

    assertThat(lifecycle.step(new RunnerLifecycleInput.ServicesStarted(ServiceSequence.StartKind.STARTED, false,
        Optional.empty()))).containsExactly(new RunnerLifecycleCommand.StartCompleted(Optional.empty()));
  }

  @Test
  void withoutAPreflightAStartContendsAtOnce() {
    RunnerLifecycle lifecycle = new RunnerLifecycle(
        new RunnerLifecycleConfig(true, false, LossPolicy.Kind.RECONTEND, "ns/lease", "10s"));

    assertThat(lifecycle.step(new RunnerLifecycleInput.Start(Optional.empty())))
        .containsExactly(new RunnerLifecycleCommand.StartElector());
    assertThat(lifecycle.phase()).isEqualTo(new RunnerLifecyclePhase.Contending());
  }

  @Test
  void runningUnelectedNeedsItsTerm() {
    RunnerLifecycle lifecycle = new RunnerLifecycle(
        new RunnerLifecycleConfig(false, false, LossPolicy.Kind.EXIT, "ns/lease", "10s"));

    assertThatThrownBy(() -> lifecycle.step(new RunnerLifecycleInput.Start(Optional.empty())))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("running unelected needs its term");
  }

  @Test
  void theDriverLearnsWhetherAVirtualMachineErrorWasThrown() {
    assertThat(RunnerLifecycleTable.reach("leading").fatal()).isFalse();
    assertThat(RunnerLifecycleTable.reach("leading, start threw VME").fatal()).isTrue();
    RunnerLifecycle stopping = RunnerLifecycleTable.reach("stopping: loss");
    stopping.step(new RunnerLifecycleInput.ServicesStopped(false, true));
    assertThat(stopping.fatal()).isTrue();
  }

  @Test
  void itsDescriptionNamesThePhaseTheServicesAndAClose() {
    assertThat(RunnerLifecycleTable.reach("leading")).hasToString(
        "RunnerLifecycle{" + RunnerLifecycleTable.reach("leading").phase() + ", services RUNNING}");
    assertThat(RunnerLifecycleTable.reach("stopping: close").toString())
        .isEqualTo("RunnerLifecycle{Stopping[reason=CLOSE, failure=Optional.empty], services STOPPING, closing}");
  }

  // ---- the broken variants -----------------------------------------------------------------------------------

  /** The rows of the table (as the file has them) that {@code flaw} changes, with their outcome under the flaw. */
  static List<String> rowsChangedBy(RunnerFlaw flaw) throws IOException {
    List<String> changed = new ArrayList<>();
    for (RunnerLifecycleStepTest.Row row : RunnerLifecycleStepTest.table()) {
      String flawed = RunnerLifecycleTable.outcome(row.phase(), row.input(), flaw);
      if (!flawed.equals(row.outcome())) {
        changed.add(row.phase() + " | " + row.input() + " | " + flawed);
      }
    }
    return changed;
  }

  @Test
  void releaseBeforeStopReleasesBeforeTheServicesStopOnEveryClose() throws IOException {
    List<String> changed = rowsChangedBy(RunnerFlaw.RELEASE_BEFORE_STOP);

    assertThat(changed).contains("leading | close | end term t4; close elector; finish elector: release; stop"
        + " services #1 => Stopping(CLOSE), stopping");
    assertThat(changed).allSatisfy(row -> assertThat(row).startsWith("leading")
        .containsPattern("\\| (owner )?close \\|")
        .contains("close elector; finish elector: release"));
  }

  @Test
  void releaseAfterHungStopReleasesWhenACloseOutlivedItsDeadline() throws IOException {
    assertThat(rowsChangedBy(RunnerFlaw.RELEASE_AFTER_HUNG_STOP)).isNotEmpty().allSatisfy(row -> assertThat(row)
        .contains("| deadline |").contains("finish elector: release"));
  }

  @Test
  void startWhileClosingStartsTheServicesOfATermWonWhileFinishing() throws IOException {
    assertThat(rowsChangedBy(RunnerFlaw.START_WHILE_CLOSING)).containsExactly(
        "finishing: closed | elected | publish LEADING t4; start services t4 => Leading, starting",
        "finishing: hung | elected | publish LEADING t4; start services t4 => Leading, starting");
  }

  @Test
  void preflightDenialIgnoredContendsAfterADeniedPreflight() throws IOException {
    assertThat(rowsChangedBy(RunnerFlaw.PREFLIGHT_DENIAL_IGNORED)).containsExactly(
        "preflight | preflight denied | allow writes => Contending, idle",
        "preflight, EXIT | preflight denied | allow writes => Contending, idle",
        "preflight, followed | preflight denied | publish FOLLOWING x; allow writes => Contending, idle");
  }

  @Test
  void failureLeavesServicesStopsTheRunnerAfterAFailedElectionWithoutStoppingItsServices() throws IOException {
    List<String> changed = rowsChangedBy(RunnerFlaw.FAILURE_LEAVES_SERVICES);

    assertThat(changed).contains(
        "leading | failed | log ERROR; end term t4; publish FOLLOWING none; report stopped ELECTION_FAILED"
            + " => Stopped(ELECTION_FAILED), running",
        "leading, EXIT | elector finished | log ERROR; end term t4; publish FOLLOWING none; exit"
            + " => Exiting(ELECTION_FAILED), running",
        "unelected | failed | log ERROR; end term unelected; report stopped ELECTION_FAILED"
            + " => Stopped(ELECTION_FAILED), running");
    assertThat(changed).allSatisfy(row -> assertThat(row).doesNotContain("stop services")
        .containsPattern("=> (Stopped|Exiting)\\(ELECTION_FAILED\\)"));
  }

  @Test
  void unelectedFailedStartLeavesServicesReportsAFailedStartAtOnceAndStopsNothing() throws IOException {
    List<String> changed = rowsChangedBy(RunnerFlaw.UNELECTED_FAILED_START_LEAVES_SERVICES);

    assertThat(changed).contains(
        "unelected starting | start failed | start completed: failed; report stopped START_FAILED"
            + " => Stopped(START_FAILED), starting",
        "unelected starting | start threw VME | start completed: failed; report stopped START_FAILED"
            + " => Stopped(START_FAILED), starting");
    assertThat(changed).allSatisfy(row -> assertThat(row).startsWith("unelected").doesNotContain("stop services")
        .contains("=> Stopped(START_FAILED)"));
  }

  @Test
  void lossHandlerBeforeStopCallsTheCustomHandlerBeforeTheServicesStop() throws IOException {
    List<String> changed = rowsChangedBy(RunnerFlaw.LOSS_HANDLER_BEFORE_STOP);

    assertThat(changed).contains("leading, CUSTOM | lost | end term t3; publish FOLLOWING none; call loss handler t3;"
        + " stop services #1 => HandlingLoss, stopping");
    assertThat(changed).allSatisfy(row -> assertThat(row).contains("CUSTOM"));
  }

  @Test
  void aLeaderThatShouldNeverHaveStartedAfterACloseStillIgnoresFollowsClosesAndStopsAtALoopDeath() {
    // Only the START_WHILE_CLOSING defect reaches this phase: the close guards must hold all the same.
    RunnerLifecycle lifecycle = RunnerLifecycleTable.reach("finishing: closed", RunnerFlaw.START_WHILE_CLOSING);
    lifecycle.step(new RunnerLifecycleInput.Elected(RunnerLifecycleTable.NEXT_TERM));

    assertThat(lifecycle.step(new RunnerLifecycleInput.Followed(Optional.of("x")))).isEmpty();
    assertThat(lifecycle.step(new RunnerLifecycleInput.CloseRequested())).isEmpty();
    assertThat(lifecycle.step(new RunnerLifecycleInput.ElectionFailed(RunnerLifecycleTable.BUG)).stream()
        .map(RunnerLifecycleTable::render)).containsExactly("report stopped CLOSED");
  }
}
