package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@link RunnerLifecycle} step by step: the table {@code runner-lifecycle-steps.txt} has one row per phase and
 * input, with the commands and the phase that follow; every row is checked against the real lifecycle. No
 * threads, no clock: the lifecycle is a pure function of its inputs. The rows for the cases that were open in
 * the old runner are also named below, so a reader finds the decision without the table.
 */
class RunnerLifecycleStepTest {

  record Row(String phase, String input, String outcome) {}

  static List<Row> table() throws IOException {
    List<Row> rows = new ArrayList<>();
    try (InputStream in = RunnerLifecycleStepTest.class.getResourceAsStream("runner-lifecycle-steps.txt")) {
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        String[] cells = line.split(" \\| ", 3);
        rows.add(new Row(cells[0].strip(), cells[1].strip(), cells[2].strip()));
      }
    }
    return rows;
  }

  @Test
  void everyRowOfTheTableIsWhatTheLifecycleDoes() throws IOException {
    List<String> wrong = new ArrayList<>();
    for (Row row : table()) {
      String actual = RunnerLifecycleTable.outcome(row.phase(), row.input());
      if (!actual.equals(row.outcome())) {
        wrong.add(row.phase() + " | " + row.input() + "\n    table: " + row.outcome() + "\n    actual: " + actual);
      }
    }
    assertThat(wrong).as("rows that differ").isEmpty();
  }

  @Test
  void theTableHasEveryPhaseTimesEveryInputOnce() throws IOException {
    Map<String, Long> rows = table().stream()
        .collect(Collectors.groupingBy(row -> row.phase() + " | " + row.input(), LinkedHashMap::new,
            Collectors.counting()));
    List<String> expected = new ArrayList<>();
    for (String phase : RunnerLifecycleTable.SETUPS.keySet()) {
      for (String input : RunnerLifecycleTable.INPUTS.keySet()) {
        expected.add(phase + " | " + input);
      }
    }
    assertThat(rows.keySet()).containsExactlyElementsOf(expected);
    assertThat(rows.values()).allMatch(count -> count == 1);
  }

  @Test
  void theVocabularyCoversEveryKindOfInputAndEveryPhase() {
    Set<Class<?>> inputs = RunnerLifecycleTable.INPUTS.values().stream().map(input -> input.get().getClass())
        .collect(Collectors.toSet());
    assertThat(inputs).containsExactlyInAnyOrder(RunnerLifecycleInput.class.getPermittedSubclasses());
    Set<Class<?>> phases = RunnerLifecycleTable.SETUPS.keySet().stream()
        .map(setup -> RunnerLifecycleTable.reach(setup).phase().getClass()).collect(Collectors.toSet());
    assertThat(phases).containsExactlyInAnyOrder(Arrays.stream(RunnerLifecyclePhase.class.getPermittedSubclasses())
        .toArray(Class<?>[]::new));
  }

  // ---- the decisions, by name ------------------------------------------------------------------------------

  @Test
  void aStopThatOutlivesStopTimeoutUnderRecontendEndsContentionForGoodAsLost() {
    assertThat(RunnerLifecycleTable.outcome("stopping: loss", "deadline"))
        .isEqualTo("log ERROR; end contention; finish elector: abandon => Finishing(LOST), hung");
    assertThat(RunnerLifecycleTable.outcome("finishing: hung", "elector finished"))
        .isEqualTo("report stopped LOST => Stopped(LOST), hung");
  }

  @Test
  void aStopThatThrewAfterALossNeverLeadsToANewTerm() {
    assertThat(RunnerLifecycleTable.outcome("stopping: loss", "stop threw")).doesNotContain("contend again");
    // A custom handler still hears of the loss, but cannot make the runner contend again.
    RunnerLifecycle custom = RunnerLifecycleTable.reach("stopping: loss, CUSTOM");
    custom.step(new RunnerLifecycleInput.ServicesStopped(false, false));
    assertThat(custom.step(new RunnerLifecycleInput.LossHandled(true)).stream().map(RunnerLifecycleTable::render))
        .containsExactly("log ERROR", "end contention", "finish elector: abandon");
  }

  @Test
  void aCloseFromInsideAServiceStartStopsTheServicesOnceTheStartReturnedThenReleases() {
    RunnerLifecycle lifecycle = RunnerLifecycleTable.reach("leading, starting");
    assertThat(lifecycle.step(new RunnerLifecycleInput.CloseRequested()).stream().map(RunnerLifecycleTable::render))
        .containsExactly("end term t4", "close elector", "stop services #1");
    // The start the close came from returns (its term ended, so what it started was stopped), then the stop.
    assertThat(lifecycle.step(new RunnerLifecycleInput.ServicesStarted(ServiceSequence.StartKind.TERM_ENDED, false,
        java.util.Optional.empty()))).isEmpty();
    assertThat(lifecycle.step(new RunnerLifecycleInput.ServicesStopped(true, false)).stream()
        .map(RunnerLifecycleTable::render)).containsExactly("finish elector: release");
  }

  @Test
  void aCloseNeverExitsNotEvenAfterTheElectionFailed() throws IOException {
    assertThat(table()).filteredOn(row -> row.input().equals("close")).allSatisfy(
        row -> assertThat(row.outcome()).as(row.phase()).doesNotContain("exit"));
    RunnerLifecycle lifecycle = RunnerLifecycleTable.reach("stopping: failed");
    lifecycle.step(new RunnerLifecycleInput.CloseRequested());
    assertThat(lifecycle.step(new RunnerLifecycleInput.ServicesStopped(true, false)).stream()
        .map(RunnerLifecycleTable::render)).containsExactly("report stopped ELECTION_FAILED");
  }

  @Test
  void aCloseWhileTheExiterRunsStopsTheRunnerAtOnce() {
    // The exiter may be System.exit(), which runs the shutdown hook that called close(): waiting would hang.
    assertThat(RunnerLifecycleTable.outcome("exiting", "close")).isEqualTo("report stopped LOST => Stopped(LOST), idle");
  }

  /**
   * The owner's close (a sharded replica's coordinator's, on its membership's loss or by its plan) during a loss
   * yields to the loss policy: a handler's STOP stops the runner LOST, so that its owner honours it, where the user's
   * close answers the loss and the runner stops CLOSED (SimulationShardingStopDuringMembershipLoss, seed 1015).
   */
  @Test
  void anOwnersCloseDuringALossLetsTheHandlersStopStopTheRunnerAsLost() {
    assertThat(RunnerLifecycleTable.outcome("handling loss", "owner close")).isEqualTo("- => HandlingLoss, idle");
    assertThat(RunnerLifecycleTable.outcome("handling loss, owner closing", "handled: stop"))
        .isEqualTo("end contention; finish elector: abandon => Finishing(LOST), idle");
    assertThat(RunnerLifecycleTable.outcome("handling loss", "close"))
        .isEqualTo("finish elector: release => Finishing(CLOSED), idle");
  }

  @Test
  void anOwnersCloseDuringALossClosesOnceThePolicySaidToContendAgain() {
    assertThat(RunnerLifecycleTable.outcome("stopping: loss", "owner close"))
        .isEqualTo("- => Stopping(LOSS), stopping");
    // The FinishElector answers the loss: an "end contention" before it would end the elector's protocol first, and
    // its release would change nothing (h-relloss).
    assertThat(RunnerLifecycleTable.outcome("stopping: loss, owner closing", "stopped"))
        .isEqualTo("finish elector: release => Finishing(CLOSED), idle");
    assertThat(RunnerLifecycleTable.outcome("handling loss, owner closing", "handled: again"))
        .isEqualTo("finish elector: release => Finishing(CLOSED), idle");
    // A stop that threw still ends contention for good, as the loss rules say, whoever closes.
    assertThat(RunnerLifecycleTable.outcome("stopping: loss, owner closing", "stop threw")).contains("Finishing(LOST)");
  }

  @Test
  void anOwnersCloseOutsideALossIsAClose() throws IOException {
    List<String> differ = new ArrayList<>();
    for (String setup : RunnerLifecycleTable.SETUPS.keySet()) {
      if (setup.startsWith("stopping: loss") || setup.startsWith("handling loss")) {
        continue;
      }
      if (!RunnerLifecycleTable.outcome(setup, "owner close").equals(RunnerLifecycleTable.outcome(setup, "close"))) {
        differ.add(setup);
      }
    }
    assertThat(differ).as("phases where the owner's close is not the user's").isEmpty();
    // The exiter may be System.exit(), whose shutdown hook closes the replica: the runner stops at once, as LOST.
    assertThat(RunnerLifecycleTable.outcome("exiting", "owner close"))
        .isEqualTo("report stopped LOST => Stopped(LOST), idle");
  }

  @Test
  void theLeaseIsReleasedOnlyAfterEveryStopReturnedCleanly() throws IOException {
    assertThat(table()).filteredOn(row -> row.outcome().contains("release"))
        .allSatisfy(row -> assertThat(row.outcome()).as(row.phase() + " | " + row.input())
            .doesNotContain("hung").doesNotContain("abandon"));
    assertThat(table()).filteredOn(row -> row.outcome().contains("finish elector: release"))
        .allSatisfy(row -> assertThat(row.input()).as(row.phase())
            .isIn("stopped", "close", "owner close", "start failed", "handled: again"));
  }

  @Test
  void servicesStartOnlyWhenElectedAndNotClosing() throws IOException {
    assertThat(table()).filteredOn(row -> row.outcome().contains("start services t"))
        .extracting(row -> row.phase() + " | " + row.input())
        .containsExactly("contending | elected");
    assertThat(table()).filteredOn(row -> row.outcome().contains("start services unelected"))
        .extracting(row -> row.phase() + " | " + row.input())
        .containsExactly("created, unelected | start");
  }

  /**
   * FINDING 6. Running unelected, a failure of the runner's logic ("failed": whatever a command threw on the
   * loop, an Error included) stops the services without ending the unelected term ("unelected | failed | log
   * ERROR; stop services #1", where a close says "end term unelected; stop services #1"), and nothing ends it
   * later: reportStopped ends only an elected term (through the elector). The services' stop() runs while their
   * term still says valid, and after STOPPED the term stays valid for ever (isValid() true, awaitEnd() never
   * returns), so work fenced by the term, or waiting for its end, goes on. And under the settings' loss policy
   * (EXIT, also the default without settings) the unelected runner then calls the exiter, though running
   * unelected uses only the identity and the stop timeout of the settings (ElectionRunner.Builder#settings).
   */
  @Test
  void unelectedAFailureEndsTheTermBeforeTheStopAndDoesNotExit() {
    RunnerLifecycle lifecycle = RunnerLifecycleTable.reach("unelected");
    List<String> commands = new ArrayList<>();
    lifecycle.step(new RunnerLifecycleInput.ElectionFailed(RunnerLifecycleTable.BUG)).stream()
        .map(RunnerLifecycleTable::render).forEach(commands::add);
    lifecycle.step(new RunnerLifecycleInput.ServicesStopped(true, false)).stream()
        .map(RunnerLifecycleTable::render).forEach(commands::add);

    assertThat(commands).as("commands after the failure, then the stop's return")
        .contains("end term unelected")
        .doesNotContain("exit");
    assertThat(commands.indexOf("end term unelected")).as("the term ends before the services stop")
        .isLessThan(commands.indexOf("stop services #1"));
    assertThat(lifecycle.phase()).isInstanceOf(RunnerLifecyclePhase.Stopped.class);
  }
}
