package io.github.electionpolicy.josdk;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits for a condition with a generous deadline instead of asserting on timings. */
final class Await {

  /** Long enough for a JOSDK operator to start on a loaded 2-core machine. */
  static final Duration GENEROUS = Duration.ofSeconds(30);

  private Await() {}

  /** Waits until {@code condition} holds; fails with {@code what} and {@code state} after {@link #GENEROUS}. */
  static void until(String what, BooleanSupplier condition, Supplier<?> state) throws InterruptedException {
    long deadline = System.nanoTime() + GENEROUS.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("not within " + GENEROUS.toSeconds() + " s: " + what + "\n" + state.get());
      }
      Thread.sleep(20);
    }
  }
}
