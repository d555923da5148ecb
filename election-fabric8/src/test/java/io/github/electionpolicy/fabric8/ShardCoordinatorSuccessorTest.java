package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ShardCoordinatorCommand.HandOver;
import io.github.electionpolicy.fabric8.ShardCoordinatorCommand.Successor;
import io.github.electionpolicy.fabric8.ShardCoordinatorCommand.Why;
import io.github.electionpolicy.fabric8.ShardCoordinatorInput.CloseRequested;
import io.github.electionpolicy.fabric8.ShardCoordinatorInput.MembershipHeld;
import io.github.electionpolicy.fabric8.ShardCoordinatorInput.ShardOwned;
import io.github.electionpolicy.fabric8.ShardCoordinatorInput.Start;
import io.github.electionpolicy.fabric8.ShardCoordinatorInput.ViewObserved;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Whom {@link ShardCoordinator} names in a hand-over of a surplus shard: the member whose own plan takes the shard once
 * it is free, as every member plans from the same view, with the resourceVersion of that member's membership Lease as
 * the view saw it (the hand-over's proof); nobody when the view has no version for that member, when the runner held
 * nothing (a lost race, a free shard no longer planned here), or when this replica leaves (a member it would name may
 * be leaving at the same moment).
 */
class ShardCoordinatorSuccessorTest {

  private static final int SHARDS = 8;

  /** Member "a", owning every shard alone, with the view {@code versions} of the membership Leases. */
  private static ShardCoordinator owningAll() {
    ShardCoordinator a = new ShardCoordinator("a", SHARDS, 0);
    a.step(new Start(0));
    a.step(new MembershipHeld(1));
    a.step(new ViewObserved(Set.of("a"), Map.of(), Map.of("a", "1"), 2));
    for (int shard = 0; shard < SHARDS; shard++) {
      a.step(new ShardInputs(shard).contending());
      a.step(new ShardOwned(shard, 1, 3));
    }
    return a;
  }

  private record ShardInputs(int shard) {
    ShardCoordinatorInput contending() {
      return new ShardCoordinatorInput.ShardContending(shard, 3);
    }
  }

  private static Map<Integer, String> allHeldBy(String holder) {
    Map<Integer, String> holders = new TreeMap<>();
    for (int shard = 0; shard < SHARDS; shard++) {
      holders.put(shard, holder);
    }
    return holders;
  }

  private static List<HandOver> handOvers(List<ShardCoordinatorCommand> commands) {
    return commands.stream().filter(HandOver.class::isInstance).map(HandOver.class::cast).toList();
  }

  @Test
  void aSurplusShardIsHandedToTheJoinerThatEveryPlanGivesItToWithItsMembershipVersion() {
    ShardCoordinator a = owningAll();

    List<HandOver> handOvers = handOvers(a.step(new ViewObserved(Set.of("a", "b"), allHeldBy("a"),
        Map.of("a", "5", "b", "7"), 10)));

    assertThat(handOvers).hasSize(SHARDS / 2).allSatisfy(handOver -> {
      assertThat(handOver.why()).isEqualTo(Why.SURPLUS);
      assertThat(handOver.successor()).contains(new Successor("b", "7"));
    });
  }

  @Test
  void aLeaverReleasesItsShardsNamingNobody() {
    ShardCoordinator a = owningAll();
    a.step(new ViewObserved(Set.of("a", "b", "c"), allHeldBy("a"), Map.of("a", "5", "b", "7", "c", "9"), 10));
    Set<Integer> kept = a.tokens().keySet();

    List<HandOver> handOvers = handOvers(a.step(new CloseRequested(20)));

    assertThat(handOvers).extracting(HandOver::shard).containsExactlyInAnyOrderElementsOf(kept);
    assertThat(handOvers).allSatisfy(handOver -> {
      assertThat(handOver.why()).isEqualTo(Why.LEAVING);
      assertThat(handOver.successor()).as("a member it names may be leaving too").isEmpty();
    });
  }

  /**
   * A hand-over this replica will not run (it leaves, or holds its share already) gets a runner only to decline it,
   * once while the view shows it held here, and that runner counts until it stopped: a leaver releases its
   * membership Lease after it.
   */
  @Test
  void aHandOverToAReplicaThatLeavesIsDeclinedOnceAndTheLeaveWaitsForIt() {
    ShardCoordinator b = new ShardCoordinator("b", SHARDS, 0);
    b.step(new Start(0));
    b.step(new MembershipHeld(1));
    Map<Integer, String> holders = allHeldBy("a");
    holders.remove(0);
    b.step(new ViewObserved(Set.of("a", "b"), holders, Map.of("a", "1", "b", "2"), 2));
    b.step(new ShardInputs(0).contending());
    b.step(new ShardOwned(0, 1, 3));
    b.step(new CloseRequested(4));
    assertThat(b.phase()).isInstanceOf(ShardCoordinatorPhase.Leaving.class);

    holders.put(0, "b");
    holders.put(5, "b");
    List<ShardCoordinatorCommand> commands = b.step(new ViewObserved(Set.of("a"), holders, Map.of("a", "1"),
        Set.of(5), 5));
    assertThat(commands).containsExactly(new ShardCoordinatorCommand.Decline(5));
    assertThat(b.step(new ViewObserved(Set.of("a"), holders, Map.of("a", "1"), Set.of(5), 6)))
        .as("once while the view shows it").isEmpty();

    assertThat(b.step(new ShardCoordinatorInput.ShardStopped(0, true, 7))).as("the decline still runs").isEmpty();
    assertThat(b.step(new ShardCoordinatorInput.ShardStopped(5, true, 8)))
        .containsExactly(new ShardCoordinatorCommand.Leave());
  }

  @Test
  void aShardHeldHereWithoutAHandOverIsNotDeclined() {
    ShardCoordinator b = new ShardCoordinator("b", SHARDS, 0);
    b.step(new Start(0));
    b.step(new MembershipHeld(1));
    b.step(new ViewObserved(Set.of("a", "b"), allHeldBy("a"), Map.of("a", "1", "b", "2"), 2));
    b.step(new CloseRequested(3));

    Map<Integer, String> holders = allHeldBy("a");
    holders.put(5, "b"); // a term of an earlier process of "b": waited out, as before
    assertThat(b.step(new ViewObserved(Set.of("a"), holders, Map.of("a", "1"), Set.of(), 4))).isEmpty();
  }

  @Test
  void aMemberWithoutAVersionInTheViewIsNamedForNothing() {
    ShardCoordinator a = owningAll();

    List<HandOver> handOvers = handOvers(a.step(new ViewObserved(Set.of("a", "b"), allHeldBy("a"), Map.of("a", "5"),
        10)));

    assertThat(handOvers).hasSize(SHARDS / 2).allSatisfy(handOver -> assertThat(handOver.successor()).isEmpty());
  }

  @Test
  void aRunnerThatHoldsNothingNamesNobody() {
    ShardCoordinator a = new ShardCoordinator("a", SHARDS, 0);
    a.step(new Start(0));
    a.step(new MembershipHeld(1));
    a.step(new ViewObserved(Set.of("a"), Map.of(), Map.of("a", "1"), 2));

    // Every shard it contends for shows up held by "b", a live member: the races are lost.
    List<HandOver> handOvers = handOvers(a.step(new ViewObserved(Set.of("a", "b"), allHeldBy("b"),
        Map.of("a", "1", "b", "3"), 3)));

    assertThat(handOvers).isNotEmpty().allSatisfy(handOver -> {
      assertThat(handOver.why()).isEqualTo(Why.LOST_RACE);
      assertThat(handOver.successor()).isEqualTo(Optional.empty());
    });
  }
}
