package io.github.electionpolicy.micrometer;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a generous deadline, polling: no test asserts on how long anything took. */
final class Await {

  /** Long enough for a loaded 2-core machine; a condition that holds returns at once. */
  static final Duration DEADLINE = Duration.ofSeconds(20);

  private Await() {}

  static boolean until(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    while (System.nanoTime() - deadline < 0) {
      if (condition.getAsBoolean()) {
        return true;
      }
      Thread.sleep(10);
    }
    return condition.getAsBoolean();
  }
}
