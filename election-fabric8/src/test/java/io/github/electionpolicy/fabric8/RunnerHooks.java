package io.github.electionpolicy.fabric8;

import java.util.concurrent.CountDownLatch;

/**
 * What tests do to an {@link ElectionRunner} that no user can: a crash, a sighting from another watch, a close that
 * does not wait. Each goes through the runner's {@link LifecycleDriver}, as the runner's own calls do.
 */
final class RunnerHooks {

  private RunnerHooks() {}

  /** Ends {@code runner} as a killed process ends, to other replicas (see {@link LifecycleDriver#crash}). */
  static void crash(ElectionRunner runner) {
    LifecycleDriver driver = runner.driverForTest();
    onLoopAndWait(driver, driver::crash);
  }

  /** What another watch of this process saw of the Lease (see {@link LifecycleDriver#sighted}), on the loop. */
  static void sighted(ElectionRunner runner, LeaseRecord record, long arrivedNanos) {
    LifecycleDriver driver = runner.driverForTest();
    onLoopAndWait(driver, () -> driver.sighted(record, arrivedNanos, false));
  }

  /** Runs {@code task} on {@code driver}'s loop and waits for it, whatever interrupts come (kept for the caller). */
  private static void onLoopAndWait(LifecycleDriver driver, Runnable task) {
    CountDownLatch done = new CountDownLatch(1);
    driver.loopForTest().execute(() -> {
      try {
        task.run();
      } finally {
        done.countDown();
      }
    });
    boolean interrupted = false;
    while (true) {
      try {
        done.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Asks {@code runner} to close without waiting: the simulation's single thread is the loop, and cannot wait. */
  static void closeAsync(ElectionRunner runner) {
    runner.driverForTest().requestClose();
  }
}
