package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link ShardPlanner}'s step table: hand-picked views (notation of {@link ShardView#of}: one character per shard,
 * a member's letter, {@code -} free, {@code ~} a departed holder) and the plan of one member. A cell {@code #n}
 * says how many shards without saying which: those depend on rendezvous weights, and the properties cover them.
 */
class ShardPlannerStepTest {

  record Row(String name, String live, String owners, String self, String keep, String handOver, String take,
      int quota) {
    @Override
    public String toString() {
      return name + ": S=" + owners.length() + " live=" + live + " owners=" + owners + " self=" + self;
    }
  }

  static Stream<Row> table() {
    return Stream.of(
        new Row("S=16/M=3 from nothing: the smallest identity gets the 16th", "abc", "----------------", "a",
            "", "", "#6", 6),
        new Row("S=16/M=3 from nothing", "abc", "----------------", "c", "", "", "#5", 5),
        new Row("S=16/M=3 fair: nothing moves", "abc", "aaaaaabbbbbccccc", "b", "6,7,8,9,10", "", "", 5),
        new Row("S=16 d joins: a hands over 2 of 6", "abcd", "aaaaaabbbbbccccc", "a", "#4", "#2", "", 4),
        new Row("S=16 d joins: b hands over 1 of 5", "abcd", "aaaaaabbbbbccccc", "b", "#4", "#1", "", 4),
        new Row("S=16 d joins: the newcomer waits for the hand-overs", "abcd", "aaaaaabbbbbccccc", "d", "", "", "", 4),
        new Row("S=16 d joined: it takes what was handed over", "abcd", "aaaa-bbbb-cccc--", "d", "", "",
            "4,9,14,15", 4),
        new Row("S=4/M=3 from nothing: a gets the extra shard", "abc", "----", "a", "", "", "#2", 2),
        new Row("S=4/M=3 from nothing", "abc", "----", "c", "", "", "#1", 1),
        new Row("S=4/M=3: the extra shard stays with who holds it", "abc", "aab-", "a", "0,1", "", "", 2),
        new Row("S=4/M=3: the one lacking takes the free shard", "abc", "aab-", "c", "", "", "3", 1),
        new Row("S=1: its holder keeps it", "abc", "b", "b", "0", "", "", 1),
        new Row("S=1: the others have a quota of 0", "abc", "b", "a", "", "", "", 0),
        new Row("S=1 free: the smallest identity takes it", "ab", "-", "a", "", "", "0", 1),
        new Row("S=1 free: the other does not", "ab", "-", "b", "", "", "", 0),
        new Row("M=1: everything free, not the departed holder's", "a", "aaa~----", "a", "0,1,2", "", "4,5,6,7", 8),
        new Row("M>S from nothing: two of four get one", "abcd", "--", "a", "", "", "#1", 1),
        new Row("M>S from nothing: the others none", "abcd", "--", "c", "", "", "", 0),
        new Row("M>S: the quotas follow the holders", "abcd", "cd", "c", "0", "", "", 1),
        new Row("M>S: a non-holder gets none", "abcd", "cd", "a", "", "", "", 0),
        new Row("self not yet a member: hands over what it holds", "ab", "ab-z", "z", "", "3", "", 0),
        new Row("self not yet a member: takes nothing", "ab", "----", "z", "", "", "", 0),
        new Row("a departed holder's shards are not free", "ab", "~~ab", "b", "3", "", "", 2),
        new Row("a departed holder's shards are not free, for anyone", "ab", "~~ab", "a", "2", "", "", 2),
        new Row("over quota: keeps the shards of its highest weights", "ab", "aaaa", "a", "0,1", "2,3", "", 2),
        new Row("over quota: keeps the shards of its highest weights, not the lowest", "abc", "aaaaaa", "a", "0,4",
            "1,2,3,5", "", 2),
        new Row("S=4/M=2 from nothing: each shard to the higher weight", "ab", "----", "a", "", "", "0,2", 2),
        new Row("S=4/M=2 from nothing: each shard to the higher weight", "ab", "----", "b", "", "", "1,3", 2),
        new Row("S=8/M=3 from nothing: by weight among those lacking", "abc", "--------", "a", "", "", "4,5,7", 3),
        new Row("S=8/M=3 from nothing: by weight among those lacking", "abc", "--------", "b", "", "", "1,3,6", 3),
        new Row("S=8/M=3 from nothing: by weight among those lacking", "abc", "--------", "c", "", "", "0,2", 2),
        new Row("under quota, nothing free: waits", "ab", "aaaa", "b", "", "", "", 2),
        new Row("c left: its shards are not free until it releases them", "ab", "aabbcc", "a", "0,1", "", "", 3),
        new Row("c released: one each", "ab", "aabb--", "a", "0,1", "", "#1", 3),
        new Row("c released: one each", "ab", "aabb--", "b", "2,3", "", "#1", 3));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void planOfOneMemberFromOneView(Row row) {
    ShardView view = ShardView.of(row.live(), row.owners());
    ShardPlanner.Plan plan = ShardPlanner.FAIR.plan(view.shardCount(), view.live(), row.self(), view.owners());
    assertShards(plan.keep(), row.keep(), "keep");
    assertShards(plan.handOver(), row.handOver(), "hand over");
    assertShards(plan.take(), row.take(), "take");
    assertThat(plan.quota()).as("quota").isEqualTo(row.quota());
  }

  private static void assertShards(List<Integer> actual, String expected, String what) {
    if (expected.startsWith("#")) {
      assertThat(actual).as(what).hasSize(Integer.parseInt(expected.substring(1)));
    } else {
      List<Integer> shards = new ArrayList<>();
      Arrays.stream(expected.split(",")).filter(s -> !s.isEmpty()).forEach(s -> shards.add(Integer.parseInt(s)));
      assertThat(actual).as(what).isEqualTo(shards);
    }
  }

  @Test
  void fromNothingTheMembersSplitEveryShardBetweenThemWithoutOverlap() {
    ShardView view = ShardView.of("abc", "----------------");
    List<Integer> taken = new ArrayList<>();
    for (String member : view.live()) {
      taken.addAll(ShardPlanner.FAIR.plan(16, view.live(), member, view.owners()).take());
    }
    assertThat(taken).hasSize(16).doesNotHaveDuplicates();
  }

  /**
   * Replicas of two releases plan together during a rolling update: a weight that changed between them would have
   * them assign the same view's free shards differently (lost races and churn, though the Leases keep it safe). So
   * the weights are fixed, here computed by an implementation of their own (64-bit FNV-1a of the identity plus
   * 0x9e3779b97f4a7c15 per shard, then SplitMix64's finalizer).
   */
  @Test
  void rendezvousWeightsAreTheSameInEveryRelease() {
    assertThat(ShardPlanner.weight("a", 0)).isEqualTo(6857225946766476583L);
    assertThat(ShardPlanner.weight("b", 0)).isEqualTo(6266376793420346980L);
    assertThat(ShardPlanner.weight("replica-1", 7)).isEqualTo(-5263915956019928048L);
  }

  @Test
  void quotasSumToTheShardCount() {
    ShardView view = ShardView.of("abc", "aab-------------");
    assertThat(ShardPlanner.FAIR.quotas(16, view.live(), view.owners()))
        .isEqualTo(Map.of("a", 6, "b", 5, "c", 5));
  }

  @Test
  void aShardOutsideTheCountIsRefused() {
    assertThatThrownBy(() -> ShardPlanner.FAIR.plan(4, List.of("a"), "a", Map.of(4, "a")))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> ShardPlanner.FAIR.plan(0, List.of("a"), "a", Map.of()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("shardCount=0 is not valid");
  }
}
