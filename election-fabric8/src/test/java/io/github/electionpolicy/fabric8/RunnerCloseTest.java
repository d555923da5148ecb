package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The close state of {@link LifecycleDriver}, as a table: what each close leaves, what the lifecycle takes in ahead of
 * a queued input and what that leaves. The four flags it replaced (closeRequested, closeTaken, ownerClosed,
 * ownerCloseTaken) gave the same answers in every state they could reach.
 */
class RunnerCloseTest {

  private static final RunnerLifecycleInput FOLLOWED = new RunnerLifecycleInput.Followed(Optional.empty());
  private static final RunnerLifecycleInput LOST =
      new RunnerLifecycleInput.Lost(RunnerLifecycleTable.TERM);

  @Test
  void theUsersCloseSupersedesTheOwnersAndIsAskedOnce() {
    assertThat(RunnerClose.OPEN.userAsks()).isEqualTo(RunnerClose.USER_ASKED);
    assertThat(RunnerClose.OWNER_ASKED.userAsks()).isEqualTo(RunnerClose.USER_ASKED);
    assertThat(RunnerClose.OWNER_TAKEN.userAsks()).isEqualTo(RunnerClose.USER_ASKED);
    assertThat(RunnerClose.USER_ASKED.userAsks()).isEqualTo(RunnerClose.USER_ASKED);
    assertThat(RunnerClose.USER_TAKEN.userAsks()).as("taken stays taken").isEqualTo(RunnerClose.USER_TAKEN);
  }

  @Test
  void theOwnersCloseChangesNothingOnceAskedOrAfterTheUsers() {
    assertThat(RunnerClose.OPEN.ownerAsks()).isEqualTo(RunnerClose.OWNER_ASKED);
    assertThat(RunnerClose.OWNER_ASKED.ownerAsks()).isEqualTo(RunnerClose.OWNER_ASKED);
    assertThat(RunnerClose.OWNER_TAKEN.ownerAsks()).as("taken stays taken").isEqualTo(RunnerClose.OWNER_TAKEN);
    assertThat(RunnerClose.USER_ASKED.ownerAsks()).isEqualTo(RunnerClose.USER_ASKED);
    assertThat(RunnerClose.USER_TAKEN.ownerAsks()).isEqualTo(RunnerClose.USER_TAKEN);
  }

  @Test
  void whoAskedIsReadAsTheDriverReadsIt() {
    for (RunnerClose state : RunnerClose.values()) {
      assertThat(state.userAsked()).as("%s user asked", state)
          .isEqualTo(state == RunnerClose.USER_ASKED || state == RunnerClose.USER_TAKEN);
      assertThat(state.ownerAsked()).as("%s owner asked (and not the user)", state)
          .isEqualTo(state == RunnerClose.OWNER_ASKED || state == RunnerClose.OWNER_TAKEN);
    }
  }

  @Test
  void theUsersCloseIsTakenAheadOfAnyInputOnce() {
    assertThat(RunnerClose.USER_ASKED.aheadOf(false)).containsInstanceOf(RunnerLifecycleInput.CloseRequested.class);
    assertThat(RunnerClose.USER_ASKED.aheadOf(true)).containsInstanceOf(RunnerLifecycleInput.CloseRequested.class);
    assertThat(RunnerClose.USER_ASKED.taken()).isEqualTo(RunnerClose.USER_TAKEN);
    assertThat(RunnerClose.USER_TAKEN.aheadOf(false)).isEmpty();
  }

  @Test
  void theOwnersCloseIsTakenAheadOfAnyInputButALossOnce() {
    assertThat(RunnerClose.OWNER_ASKED.aheadOf(false))
        .containsInstanceOf(RunnerLifecycleInput.OwnerCloseRequested.class);
    assertThat(RunnerClose.OWNER_ASKED.aheadOf(true)).as("it yields to the loss's policy").isEmpty();
    assertThat(RunnerClose.OWNER_ASKED.taken()).isEqualTo(RunnerClose.OWNER_TAKEN);
    assertThat(RunnerClose.OWNER_TAKEN.aheadOf(false)).isEmpty();
  }

  @Test
  void aLossIsQueuedWhenItIsTheInputOrBehindIt() {
    assertThat(RunnerClose.lossAmong(LOST, List.of())).isTrue();
    assertThat(RunnerClose.lossAmong(FOLLOWED, List.of(LOST)))
        .as("a foreign write's loss: Followed, then Lost, fed together").isTrue();
    assertThat(RunnerClose.lossAmong(FOLLOWED, List.of(FOLLOWED))).isFalse();
    assertThat(RunnerClose.lossAmong(FOLLOWED, List.of())).isFalse();
  }

  @Test
  void nothingIsTakenWhileNobodyAsked() {
    assertThat(RunnerClose.OPEN.aheadOf(false)).isEmpty();
    assertThat(RunnerClose.OPEN.taken()).isEqualTo(RunnerClose.OPEN);
  }
}
