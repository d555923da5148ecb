package io.github.electionpolicy.testsupport;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits for a condition with a deadline instead of sleeping for a guessed time: a condition that holds returns at
 * once, and the deadline is generous enough for a loaded two-core machine, so no test asserts how long anything
 * took. This is the one place the tests poll.
 *
 * <pre>{@code
 * Await.until("the leader runs its service", () -> log.running().contains("a"));
 * assertThat(Await.holds(runner::isLive, Duration.ofSeconds(5))).isTrue();
 * }</pre>
 *
 * <p>Stateless and thread-safe.
 */
public final class Await {

  /** The deadline of the methods that take none: long enough for a JOSDK operator or a Spring context to start. */
  public static final Duration GENEROUS = Duration.ofSeconds(30);

  /** How often a condition is evaluated: often enough not to slow a test, rarely enough not to load the machine. */
  private static final long POLL_MILLIS = 5;

  private Await() {}

  /**
   * Whether {@code condition} holds within {@code within}: {@code true} as soon as it does, else its value at the
   * deadline.
   *
   * @param condition evaluated on the caller's thread, repeatedly; must not block
   * @param within the deadline, from now
   * @return whether the condition held by the deadline
   * @throws InterruptedException when the caller is interrupted while it waits
   */
  public static boolean holds(BooleanSupplier condition, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() - deadline < 0) {
      if (condition.getAsBoolean()) {
        return true;
      }
      pause();
    }
    return condition.getAsBoolean();
  }

  /**
   * Whether {@code condition} holds within {@link #GENEROUS}.
   *
   * @param condition evaluated on the caller's thread, repeatedly; must not block
   * @return whether the condition held by the deadline
   * @throws InterruptedException when the caller is interrupted while it waits
   */
  public static boolean holds(BooleanSupplier condition) throws InterruptedException {
    return holds(condition, GENEROUS);
  }

  /**
   * The first present value of {@code value} within {@code within}, else its value at the deadline (which may be
   * empty).
   *
   * @param <T> the value's type
   * @param value evaluated on the caller's thread, repeatedly; must not block
   * @param within the deadline, from now
   * @return the value, or empty when it was not present by the deadline
   * @throws InterruptedException when the caller is interrupted while it waits
   */
  public static <T> Optional<T> present(Supplier<Optional<T>> value, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() - deadline < 0) {
      Optional<T> found = value.get();
      if (found.isPresent()) {
        return found;
      }
      pause();
    }
    return value.get();
  }

  /**
   * Returns once {@code condition} holds; fails naming {@code what} if it does not within {@link #GENEROUS}.
   *
   * @param what the condition in words, for the failure
   * @param condition evaluated on the caller's thread, repeatedly; must not block
   * @throws AssertionError when the condition did not hold in time, or the caller was interrupted
   */
  public static void until(String what, BooleanSupplier condition) {
    until(what, condition, GENEROUS, () -> "");
  }

  /**
   * Returns once {@code condition} holds; fails naming {@code what} if it does not within {@code within}.
   *
   * @param what the condition in words, for the failure
   * @param condition evaluated on the caller's thread, repeatedly; must not block
   * @param within the deadline, from now
   * @throws AssertionError when the condition did not hold in time, or the caller was interrupted
   */
  public static void until(String what, BooleanSupplier condition, Duration within) {
    until(what, condition, within, () -> "");
  }

  /**
   * Returns once {@code condition} holds; fails naming {@code what} and showing {@code state} if it does not
   * within {@link #GENEROUS}.
   *
   * @param what the condition in words, for the failure
   * @param condition evaluated on the caller's thread, repeatedly; must not block
   * @param state what the failure shows besides {@code what}, e.g. a log of the replicas
   * @throws AssertionError when the condition did not hold in time, or the caller was interrupted
   */
  public static void until(String what, BooleanSupplier condition, Supplier<?> state) {
    until(what, condition, GENEROUS, state);
  }

  /**
   * Returns once {@code condition} holds; fails naming {@code what} and showing {@code state} if it does not
   * within {@code within}.
   *
   * @param what the condition in words, for the failure
   * @param condition evaluated on the caller's thread, repeatedly; must not block
   * @param within the deadline, from now
   * @param state what the failure shows besides {@code what}, e.g. a log of the replicas
   * @throws AssertionError when the condition did not hold in time, or the caller was interrupted
   */
  public static void until(String what, BooleanSupplier condition, Duration within, Supplier<?> state) {
    boolean held;
    try {
      held = holds(condition, within);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for: " + what, e);
    }
    if (!held) {
      String shown = String.valueOf(state.get());
      throw new AssertionError("not within " + within.toMillis() + " ms: " + what
          + (shown.isEmpty() ? "" : "\n" + shown));
    }
  }

  private static void pause() throws InterruptedException {
    // Polling, not a guessed wait: the condition is what ends it. Nothing to listen to in general.
    Thread.sleep(POLL_MILLIS);
  }
}
