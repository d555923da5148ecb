package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@link ShardCoordinator} step by step: the table {@code shard-coordinator-steps.txt} has one row per phase and
 * input, with the commands, the phase and the shard runners that follow; every row is checked against the real
 * coordinator. No threads, no clock: the coordinator is a pure function of its inputs. The rules of its Javadoc are
 * also checked over the whole table, by name.
 */
class ShardCoordinatorStepTest {

  record Row(String phase, String input, String outcome) {}

  static List<Row> table() throws IOException {
    List<Row> rows = new ArrayList<>();
    try (InputStream in = ShardCoordinatorStepTest.class.getResourceAsStream("shard-coordinator-steps.txt")) {
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
  void everyRowOfTheTableIsWhatTheCoordinatorDoes() throws IOException {
    List<String> wrong = new ArrayList<>();
    for (Row row : table()) {
      String actual = ShardCoordinatorTable.outcome(row.phase(), row.input());
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
    for (String phase : ShardCoordinatorTable.SETUPS.keySet()) {
      for (String input : ShardCoordinatorTable.INPUTS.keySet()) {
        expected.add(phase + " | " + input);
      }
    }
    assertThat(rows.keySet()).containsExactlyElementsOf(expected);
    assertThat(rows.values()).allMatch(count -> count == 1);
  }

  @Test
  void theVocabularyCoversEveryKindOfInputAndEveryPhase() {
    Set<Class<?>> inputs = ShardCoordinatorTable.INPUTS.values().stream().map(input -> input.apply(0).getClass())
        .collect(Collectors.toSet());
    assertThat(inputs).containsExactlyInAnyOrder(ShardCoordinatorInput.class.getPermittedSubclasses());
    Set<Class<?>> phases = ShardCoordinatorTable.SETUPS.keySet().stream()
        .map(setup -> ShardCoordinatorTable.reach(setup).phase().getClass()).collect(Collectors.toSet());
    assertThat(phases).containsExactlyInAnyOrder(ShardCoordinatorPhase.class.getPermittedSubclasses());
  }

  /** Every kind of command comes out of some row (review h-leave: no row named a successor or saw a mark). */
  @Test
  void theTableHasEveryKindOfCommand() {
    Set<Class<?>> commands = new java.util.HashSet<>();
    for (String phase : ShardCoordinatorTable.SETUPS.keySet()) {
      for (String input : ShardCoordinatorTable.INPUTS.keySet()) {
        ShardCoordinator coordinator = ShardCoordinatorTable.reach(phase);
        try {
          coordinator.step(ShardCoordinatorTable.input(input, ShardCoordinatorTable.NOW))
              .forEach(command -> commands.add(command.getClass()));
        } catch (IllegalStateException e) {
          // a row that throws (start twice)
        }
      }
    }
    assertThat(commands).containsExactlyInAnyOrder(ShardCoordinatorCommand.class.getPermittedSubclasses());
  }

  @Test
  void aLeaverNamesItsSuccessorsOnlyFromAViewThatShowsItsMark() throws IOException {
    assertThat(table()).filteredOn(row -> row.outcome().contains("name ") || row.outcome().contains("mark seen"))
        .isNotEmpty().allSatisfy(row -> assertThat(row.input()).as(row.phase()).matches(".* [a-z]*a[a-z]* marked.*"));
    assertThat(ShardCoordinatorTable.outcome("leaving", "view b ---- a marked"))
        .isEqualTo("name 0 b@v-b; name 2 b@v-b; mark seen => Leaving(CLOSED), 0:closing 2:closing");
  }

  @Test
  void aLeaverStaysForAnEarlierLeaverHoldingAShardForAtMostTheBound() {
    assertThat(ShardCoordinatorTable.outcome("leaving, lingering", "tick"))
        .isEqualTo("- => Leaving(CLOSED), no runners");
    assertThat(ShardCoordinatorTable.outcome("leaving, lingering", "view b ---- a marked"))
        .isEqualTo("leave => Releasing(CLOSED), no runners");
    assertThat(ShardCoordinatorTable.outcome("leaving, lingering", "tick, settled"))
        .isEqualTo("leave => Releasing(CLOSED), no runners");
    assertThat(ShardCoordinatorTable.outcome("leaving, lingering", "view b -a-- a marked, 1 to a"))
        .isEqualTo("decline 1 => Leaving(CLOSED), 1:closing");
  }

  // ---- the rules, by name, over the whole table ----------------------------------------------------------

  @Test
  void aSurplusShardIsHandedOverOnlyOnceMembershipSettled() throws IOException {
    assertThat(ShardCoordinatorTable.outcome("member, surplus unsettled", "tick")).startsWith("- =>");
    assertThat(ShardCoordinatorTable.outcome("member, surplus unsettled", "tick, settled"))
        .startsWith("hand over 2 surplus; hand over 3 surplus =>");
    // A view that changes the live set starts the settle time again.
    assertThat(ShardCoordinatorTable.outcome("member alone, owning all", "view ab aaaa")).startsWith("- =>");
    // Nor while the view never saw a live member's Lease change (SimulationShardingStaleMember); once it did, at once.
    assertThat(ShardCoordinatorTable.outcome("member, surplus, b unconfirmed", "tick, settled")).startsWith("- =>");
    assertThat(ShardCoordinatorTable.outcome("member, surplus, b unconfirmed", "view ab aaaa"))
        .startsWith("hand over 2 surplus; hand over 3 surplus =>");
  }

  /**
   * A shard handed over to this replica past its share is declined, but taken in while a live member of the view is
   * unconfirmed (its quota may be a member's long gone: SimulationShardingStaleMember), and kept until it is; a leaver
   * names no unconfirmed member.
   */
  @Test
  void whileAMemberIsUnconfirmedAShardHandedOverIsTakenInAndNoneNamesIt() {
    Map<Boolean, String> outcomes = new LinkedHashMap<>();
    for (boolean unconfirmed : new boolean[] {false, true}) {
      ShardCoordinator a = ShardCoordinatorTable.reach("member, fair");
      outcomes.put(unconfirmed, a.step(new ShardCoordinatorInput.ViewObserved(Set.of("a", "b"),
          Map.of(0, "a", 1, "b", 2, "a", 3, "a"), Map.of("a", "v-a", "b", "v-b"), Set.of(3), Set.of(),
          unconfirmed ? Set.of("b") : Set.of(), ShardCoordinatorTable.SETTLED)).stream()
          .map(ShardCoordinatorTable::render).collect(Collectors.joining("; ")));
    }
    // b handed shard 3 over to a, fair with 0 and 2 (a's weights: 0 > 1 > 2 > 3).
    assertThat(outcomes).containsExactly(Map.entry(false, "decline 3"), Map.entry(true, "contend 3"));
    ShardCoordinator leaver = ShardCoordinatorTable.reach("leaving");
    assertThat(leaver.step(new ShardCoordinatorInput.ViewObserved(Set.of("b"), Map.of(), Map.of("b", "v-b"), Set.of(),
        Set.of("a"), Set.of("b"), ShardCoordinatorTable.NOW))).extracting(ShardCoordinatorTable::render)
        .containsExactly("mark seen");
  }

  @Test
  void freeShardsAreTakenAtOnceWithoutWaitingForMembershipToSettle() {
    assertThat(ShardCoordinatorTable.outcome("member, fair", "view abc ----")).startsWith("contend 3 =>");
  }

  @Test
  void aRunnerThatLostTheRaceIsClosedButAnOwnerIsNeverClosedBecauseOfAView() {
    assertThat(ShardCoordinatorTable.outcome("member, owning 0, contending 2", "view ab bbbb"))
        .isEqualTo("hand over 2 lost_race => Member, 0:owning 2:closing");
  }

  @Test
  void neverTwoRunnersForOneShard() throws IOException {
    // A shard being handed over is not contended again until its runner reported stopped.
    assertThat(table()).filteredOn(row -> row.phase().equals("member, handing over"))
        .allSatisfy(row -> assertThat(row.outcome()).as(row.input()).doesNotContain("contend 2")
            .doesNotContain("contend 3"));
    assertThat(table()).allSatisfy(row -> {
      String after = row.outcome().substring(row.outcome().indexOf("=>") + 2);
      for (int shard = 0; shard < ShardCoordinatorTable.SHARDS; shard++) {
        assertThat(after.split(" " + shard + ":", -1).length).as(row.toString()).isLessThanOrEqualTo(2);
      }
    });
  }

  @Test
  void theMembershipLeaseIsReleasedOnlyWhenNoShardRunnerIsLeft() throws IOException {
    assertThat(table()).filteredOn(row -> row.outcome().contains("leave"))
        .allSatisfy(row -> assertThat(row.outcome()).as(row.phase() + " | " + row.input())
            .endsWith("no runners"));
  }

  @Test
  void aMemberThatLeavesSaysSoBeforeItClosesItsShardRunners() throws IOException {
    assertThat(table()).filteredOn(row -> row.outcome().contains("Leaving(") && row.phase().startsWith("member"))
        .allSatisfy(row -> assertThat(row.outcome()).as(row.phase() + " | " + row.input())
            .startsWith("announce leaving"));
    // A lapsed member holds no membership Lease to mark.
    assertThat(ShardCoordinatorTable.outcome("lapsed", "close")).doesNotContain("announce");
  }

  @Test
  void losingTheMembershipLeaseHandsOverEveryShardThenJoinsAgain() {
    assertThat(ShardCoordinatorTable.outcome("member, fair", "lost")).isEqualTo(
        "hand over 0 membership_lost; hand over 2 membership_lost => Lapsed, 0:closing 2:closing");
    ShardCoordinator lapsed = ShardCoordinatorTable.reach("lapsed");
    lapsed.step(new ShardCoordinatorInput.ShardStopped(0, true, 400));
    assertThat(lapsed.step(new ShardCoordinatorInput.ShardStopped(2, true, 400)))
        .containsExactly(new ShardCoordinatorCommand.Join());
    assertThat(lapsed.phase()).isInstanceOf(ShardCoordinatorPhase.Joining.class);
  }

  @Test
  void aShardRunnerThatStoppedWithoutReleasingEndsContentionForGood() throws IOException {
    assertThat(table()).filteredOn(row -> row.input().equals("stopped 0 unreleased") && row.phase().startsWith("member")
        && row.phase().contains("0")).allSatisfy(row -> assertThat(row.outcome()).as(row.phase())
            .contains("Leaving(SHARD_ABANDONED)"));
    ShardCoordinator abandoned = ShardCoordinatorTable.reach("leaving, abandoned");
    assertThat(abandoned.step(new ShardCoordinatorInput.ShardStopped(2, true, 400)))
        .containsExactly(new ShardCoordinatorCommand.Leave());
    assertThat(abandoned.step(new ShardCoordinatorInput.MembershipReleased(401)))
        .containsExactly(new ShardCoordinatorCommand.ReportStopped(ShardCoordinatorPhase.StopCause.SHARD_ABANDONED));
  }

  @Test
  void onlyAMemberContends() throws IOException {
    assertThat(table()).filteredOn(row -> row.outcome().contains("contend "))
        .allSatisfy(row -> assertThat(row.outcome()).as(row.phase() + " | " + row.input()).contains("=> Member"));
  }
}
