package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A replica's view of the sharded controller's Leases, judged on its own clock from what its watch saw. */
class ShardLeaseViewTest {

  private static final long S = 1_000_000_000L;
  private final ShardLeases leases = new ShardLeases("orders", 4);
  private final ShardLeaseView view = new ShardLeaseView(leases, 15 * S);

  @Test
  void membersAreTheIdentitiesHoldingMembershipLeasesAndShardsTheirHolders() {
    view.listed(List.of(member("pod-a", "Pod_A", 10, 1), member("pod-b", "pod-b", 10, 1),
        shard(0, "Pod_A", 10, 1), shard(3, "pod-b", 10, 1), shard(1, null, 10, 1),
        new ShardLeaseView.Listed("someone-elses", held("x", 10, 1), false)), 0);

    // A member's resourceVersion only from its own membership Lease: "pod-a" is not the Lease of the identity "Pod_A"
    // (whose name is cut and hashed), so no hand-over names Pod_A with a version of a Lease it may not have written.
    // Both members only listed, neither seen renewing: unconfirmed.
    assertThat(view.view(5 * S)).isEqualTo(new ShardCoordinatorInput.ViewObserved(Set.of("Pod_A", "pod-b"),
        Map.of(0, "Pod_A", 3, "pod-b"), Map.of("pod-b", "1"), Set.of(), Set.of(), Set.of("Pod_A", "pod-b"), 5 * S));
  }

  /**
   * A member is unconfirmed until its membership Lease is seen to change after this view first saw it (a list, then
   * a renewal): a list shows a crashed member's Lease as live for a lease duration, and only a change shows a writer
   * alive since (SimulationShardingStaleMember). A Lease first seen by a watch event is no different; the same content
   * again (a re-list) confirms nothing.
   */
  @Test
  void aMemberIsUnconfirmedUntilItsLeaseIsSeenToChange() {
    view.listed(List.of(member("pod-a", "pod-a", 10, 1), member("pod-b", "pod-b", 10, 1)), 0);
    view.changed(member("pod-c", "pod-c", 10, 1), S); // joins while watched
    assertThat(view.view(S).unconfirmedMembers()).containsExactlyInAnyOrder("pod-a", "pod-b", "pod-c");

    view.changed(member("pod-a", "pod-a", 10, 2), 2 * S); // pod-a renews
    view.listed(List.of(member("pod-a", "pod-a", 10, 2), member("pod-b", "pod-b", 10, 1),
        member("pod-c", "pod-c", 10, 1)), 3 * S); // a re-list: the same content
    assertThat(view.view(3 * S).liveMembers()).containsExactlyInAnyOrder("pod-a", "pod-b", "pod-c");
    assertThat(view.view(3 * S).unconfirmedMembers()).containsExactlyInAnyOrder("pod-b", "pod-c");

    view.changed(member("pod-c", "pod-c", 10, 2), 4 * S);
    assertThat(view.view(4 * S).unconfirmedMembers()).containsExactly("pod-b");
    assertThat(view.view(10 * S).liveMembers()).as("pod-b expired as first seen").containsExactlyInAnyOrder("pod-a", "pod-c");
    assertThat(view.view(10 * S).unconfirmedMembers()).isEmpty();
  }

  @Test
  void aLeaseIsHeldUntilItsDurationHasPassedSinceItsContentLastChangedHere() {
    view.listed(List.of(member("pod-a", "pod-a", 10, 1), member("pod-b", "pod-b", 10, 1)), 0);
    view.changed(member("pod-a", "pod-a", 10, 2), 8 * S); // pod-a renews; pod-b does not

    assertThat(view.view(10 * S - 1).liveMembers()).containsExactlyInAnyOrder("pod-a", "pod-b");
    assertThat(view.view(10 * S).liveMembers()).containsExactly("pod-a");
    assertThat(view.nextExpiry(10 * S)).isEqualTo(OptionalLong.of(18 * S));
    assertThat(view.view(18 * S).liveMembers()).isEmpty();
    assertThat(view.nextExpiry(18 * S)).isEmpty();
  }

  @Test
  void theSameContentAgainDoesNotRenewNorDoesAnOlderEventDateTheChangeBack() {
    view.listed(List.of(member("pod-a", "pod-a", 10, 1)), 0);
    ShardLeaseView.Listed again = member("pod-a", "pod-a", 10, 1);
    view.listed(List.of(new ShardLeaseView.Listed(again.name(), again.record().withResourceVersion("9"), false)),
        6 * S); // a re-list after a reconnect: nothing renewed
    assertThat(view.view(10 * S).liveMembers()).as("expired at 10 s, as first seen").isEmpty();

    view.changed(member("pod-a", "pod-a", 10, 2), 12 * S);
    view.changed(member("pod-a", "pod-a", 10, 3), 11 * S); // taken in after, but it arrived earlier
    assertThat(view.nextExpiry(12 * S)).isEqualTo(OptionalLong.of(22 * S));
  }

  @Test
  void theSightingIsTheLeaseAsLastListedSinceItsContentFirstShowed() {
    ShardLeaseView.Listed free = shard(1, null, 10, 1);
    view.changed(free, 0);
    // Someone annotates the released Lease: a new resourceVersion, the same content, and metadata no longer bare.
    view.changed(new ShardLeaseView.Listed(free.name(), free.record().withResourceVersion("9"), false, false), 3 * S);

    assertThat(view.sighting(free.name())).contains(
        new ShardLeaseView.Sighting(free.record().withResourceVersion("9"), 0, false));
  }

  @Test
  void aMemberMarkedLeavingIsCountedOutWhileItsShardsStillCount() {
    view.listed(List.of(member("pod-a", "pod-a", 10, 1), shard(2, "pod-a", 10, 1)), 0);
    view.changed(new ShardLeaseView.Listed(leases.memberLease("pod-a"), held("pod-a", 10, 1), true), S);

    assertThat(view.view(2 * S)).isEqualTo(new ShardCoordinatorInput.ViewObserved(Set.of(), Map.of(2, "pod-a"),
        Map.of(), Set.of(), Set.of("pod-a"), 2 * S));
    // Marked and expired (its lease of 10 s run out): neither live nor leaving.
    assertThat(view.view(12 * S).leavingMembers()).isEmpty();
  }

  @Test
  void aShardsLeaseDeletedOrLeftOutOfAReListWhileHeldCountsAsHeldUntilItsLeaseRunsOut() {
    view.listed(List.of(member("pod-a", "pod-a", 10, 1), shard(1, "pod-a", 10, 1), shard(2, "pod-a", 5, 1)), 0);
    view.deleted(leases.shardLease(1));
    view.listed(List.of(member("pod-a", "pod-a", 10, 1), shard(3, "pod-a", 0, 1)), S);

    assertThat(view.view(2 * S).holders()).as("deleted held, by hand: their holder may still run them")
        .isEqualTo(Map.of(1, "pod-a", 2, "pod-a", 3, "pod-a"));
    assertThat(view.sighting(leases.shardLease(1))).as("no Lease to take over unread").isEmpty();
    assertThat(view.nextExpiry(2 * S)).as("shard 2's deleted Lease, as first seen").isEqualTo(OptionalLong.of(5 * S));
    assertThat(view.view(5 * S).holders()).containsOnlyKeys(1, 3);
    assertThat(view.nextExpiry(5 * S)).as("the member and shard 1, as first seen")
        .isEqualTo(OptionalLong.of(10 * S));
    assertThat(view.nextExpiry(10 * S)).as("a duration of 0 counts the default 15 s").isEqualTo(OptionalLong.of(16 * S));
    assertThat(view.view(10 * S).holders()).containsOnlyKeys(3);
    assertThat(view.view(16 * S).holders()).isEmpty();
  }

  @Test
  void aLeaseDeletedReleasedOrAMembersIsGoneAtOnceAndOneCreatedAgainIsNew() {
    view.listed(List.of(shard(1, null, 10, 1), shard(2, "pod-a", 10, 1), member("pod-a", "pod-a", 10, 1)), 0);
    view.deleted(leases.shardLease(1));
    view.deleted(leases.shardLease(2));
    view.deleted(leases.memberLease("pod-a"));
    view.changed(shard(2, "pod-b", 10, 1), 3 * S);

    assertThat(view.sighting(leases.shardLease(1))).isEmpty();
    assertThat(view.view(4 * S).holders()).isEqualTo(Map.of(2, "pod-b"));
    assertThat(view.view(4 * S).liveMembers()).as("a member's Lease deleted is gone at once").isEmpty();
    assertThat(view.sighting(leases.shardLease(2)).orElseThrow().changedNanos()).as("created again: new content")
        .isEqualTo(3 * S);
    assertThat(view.view(12 * S).holders()).isEqualTo(Map.of(2, "pod-b"));
  }

  /**
   * The highest token a shard's Lease showed outlives the Lease deleted by hand and forgotten by the view, so that a
   * new runner of the shard counts past it (SimulationShardDeletedByHand); a member's Lease's is not kept.
   */
  @Test
  void theHighestTokenOfAShardsLeaseIsKeptAfterItWasDeletedAndForgotten() {
    LeaseRecord seven = new LeaseRecord("pod-a", 10, Instant.EPOCH, Instant.EPOCH, 7, "1");
    view.listed(List.of(new ShardLeaseView.Listed(leases.shardLease(0), seven, false),
        new ShardLeaseView.Listed(leases.memberLease("pod-a"), seven, false)), 0);
    view.deleted(leases.shardLease(0));
    assertThat(view.view(10 * S).holders()).as("expired: forgotten").isEmpty();
    assertThat(view.sighting(leases.shardLease(0))).isEmpty();
    assertThat(view.highestTransitions(leases.shardLease(0))).isEqualTo(7);

    view.changed(shard(0, "pod-b", 10, 2), 11 * S); // created again, at 0
    assertThat(view.highestTransitions(leases.shardLease(0))).isEqualTo(7);
    assertThat(view.highestTransitions(leases.shardLease(1))).isEqualTo(-1);
    assertThat(view.highestTransitions(leases.memberLease("pod-a"))).isEqualTo(-1);
  }

  /**
   * A token this replica's own runner took counts as seen even before the list and watch shows it (it lags, or it
   * re-listed after a deletion by hand): SimulationShardOwnTokenAfterDeletion. Never lowers what the view saw.
   */
  @Test
  void aTokenTakenByThisReplicasRunnerCountsAsSeen() {
    view.changed(shard(0, "pod-a", 10, 2), 0);
    view.took(leases.shardLease(0), 5);
    assertThat(view.highestTransitions(leases.shardLease(0))).isEqualTo(5);
    view.took(leases.shardLease(0), 3);
    assertThat(view.highestTransitions(leases.shardLease(0))).isEqualTo(5);
    view.took(leases.memberLease("pod-a"), 9);
    assertThat(view.highestTransitions(leases.memberLease("pod-a"))).isEqualTo(-1);
  }

  @Test
  void badArgumentsAreRefused() {
    assertThatThrownBy(() -> new ShardLeaseView(leases, 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("defaultDurationNanos is 0; expected > 0");
    assertThatThrownBy(() -> new ShardLeaseView.Listed("x", null, false)).isInstanceOf(NullPointerException.class);
  }

  private ShardLeaseView.Listed member(String identity, String holder, int seconds, int renewal) {
    return new ShardLeaseView.Listed(leases.memberLease(identity), held(holder, seconds, renewal), false);
  }

  private ShardLeaseView.Listed shard(int shard, String holder, int seconds, int renewal) {
    return new ShardLeaseView.Listed(leases.shardLease(shard), held(holder, seconds, renewal), false);
  }

  private static LeaseRecord held(String holder, int seconds, int renewal) {
    return new LeaseRecord(holder, seconds, Instant.EPOCH, Instant.ofEpochSecond(renewal), 0, Integer.toString(renewal));
  }
}
