package io.github.electionpolicy.springboot;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline generous enough for a loaded two-core machine; never asserts a time. */
final class Await {

  static final Duration DEADLINE = Duration.ofSeconds(20);

  private Await() {}

  /** Returns once {@code condition} holds; fails naming {@code what} if it does not within the deadline. */
  static void until(String what, BooleanSupplier condition) {
    until(what, condition, DEADLINE);
  }

  /** The same, with a deadline of its own: a JVM that starts Spring Boot may take longer on a busy machine. */
  static void until(String what, BooleanSupplier condition, Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("not within " + within.toSeconds() + " s: " + what);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for: " + what, e);
      }
    }
  }
}
