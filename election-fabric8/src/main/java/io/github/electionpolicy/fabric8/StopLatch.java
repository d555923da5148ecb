package io.github.electionpolicy.fabric8;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The moment a runner (or a sharded replica) reported {@code STOPPED}, once, and the waits for it. A wait "for ever" is
 * an untimed wait, never a timed one of {@link Long#MAX_VALUE}: the callers of {@code close()} and {@code
 * awaitStopped()} must not go on before the stop, and a controlled-concurrency explorer (Fray, {@code
 * RunnerBoundaryExplorationTest}) lets any timed wait time out, which is how it found a runner's {@code close()}
 * returning while it still led when the two were the same. Thread-safe.
 */
final class StopLatch {

  private final CountDownLatch latch = new CountDownLatch(1);

  /** The stop was reported: every wait returns. */
  void release() {
    latch.countDown();
  }

  /** Whether the stop was reported. */
  boolean released() {
    return latch.getCount() == 0;
  }

  /**
   * Waits until the stop was reported: at most {@code timeoutNanos}, or for ever if it is {@link Long#MAX_VALUE}.
   *
   * @return whether it was reported
   * @throws InterruptedException if interrupted while waiting
   */
  boolean await(long timeoutNanos) throws InterruptedException {
    if (timeoutNanos == Long.MAX_VALUE) {
      latch.await();
      return true;
    }
    return latch.await(timeoutNanos, TimeUnit.NANOSECONDS);
  }
}
