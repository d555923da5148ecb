package io.github.electionpolicy.fabric8;

import java.util.Collection;
import java.util.Optional;

/**
 * How far a runner's close got, in {@link LifecycleDriver}: nobody asked; its owner asked ({@code requestClose(true)},
 * a sharded replica's coordinator); its user asked ({@code close()}); and, for each, whether the lifecycle took it in
 * ahead of the inputs queued before the close's own task ({@link #aheadOf}). The user's close supersedes the owner's:
 * once the user asked, the owner's close is neither asked for nor taken in ahead any more, since the user's answers all
 * the owner's would (and a loss besides).
 *
 * <p>Immutable. The driver holds one in an {@code AtomicReference}: {@code close()} moves it to {@link #USER_ASKED}
 * from any thread (one compare-and-set decides which closer hands the close over), and {@code closeRequested()} reads
 * it from any thread; the owner's close (on the loop, a coordinator's task) and the takes (on the loop) update it too,
 * by compare-and-set, so that a user's close that comes meanwhile is never overwritten.
 */
enum RunnerClose {
  /** No close asked. */
  OPEN,
  /** The owner asked; the lifecycle has not taken it in yet. */
  OWNER_ASKED,
  /** The owner asked, and the lifecycle took it in ahead of an input (see {@link #aheadOf}). */
  OWNER_TAKEN,
  /** The user asked (after the owner or not); the lifecycle has not taken it in ahead of an input yet. */
  USER_ASKED,
  /** The user asked, and the lifecycle took it in ahead of an input. */
  USER_TAKEN;

  /** Whether the user asked: {@code close()} was called. */
  boolean userAsked() {
    return this == USER_ASKED || this == USER_TAKEN;
  }

  /** Whether the owner asked, and the user did not (a later user's close is to be passed on). */
  boolean ownerAsked() {
    return this == OWNER_ASKED || this == OWNER_TAKEN;
  }

  /** After the owner's close: asked, unless it was already or the user asked. */
  RunnerClose ownerAsks() {
    return this == OPEN ? OWNER_ASKED : this;
  }

  /** After the user's close: asked, unless the user asked already. */
  RunnerClose userAsks() {
    return userAsked() ? this : USER_ASKED;
  }

  /**
   * The close the lifecycle takes in ahead of an input (one of a task that ran before the close's own task): the
   * user's if not taken yet; else the owner's if not taken yet, except when {@code lossQueued}, the input or one queued
   * behind it being a loss, to which it yields (the loss policy answers it: {@link
   * RunnerLifecycleInput.OwnerCloseRequested}). A loss by a foreign write comes as {@code Followed} then {@code Lost},
   * fed together: the owner's close must not go ahead of the {@code Followed} either (OwnerCloseAheadOfALossTest). The
   * close's own input counts as any: the lifecycle then hears that close twice, which changes nothing. Never ahead of a
   * {@code Start}: the driver does not ask then.
   */
  Optional<RunnerLifecycleInput> aheadOf(boolean lossQueued) {
    if (this == USER_ASKED) {
      return Optional.of(new RunnerLifecycleInput.CloseRequested());
    }
    if (this == OWNER_ASKED && !lossQueued) {
      return Optional.of(new RunnerLifecycleInput.OwnerCloseRequested());
    }
    return Optional.empty();
  }

  /** Whether {@code input} or one of the inputs {@code queued} behind it is a loss ({@link #aheadOf}'s argument). */
  static boolean lossAmong(RunnerLifecycleInput input, Collection<RunnerLifecycleInput> queued) {
    return input instanceof RunnerLifecycleInput.Lost
        || queued.stream().anyMatch(RunnerLifecycleInput.Lost.class::isInstance);
  }

  /** After the lifecycle took in the close {@link #aheadOf} gave. */
  RunnerClose taken() {
    return this == USER_ASKED ? USER_TAKEN : this == OWNER_ASKED ? OWNER_TAKEN : this;
  }
}
