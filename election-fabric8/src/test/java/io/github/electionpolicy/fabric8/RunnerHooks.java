package io.github.electionpolicy.fabric8;

/**
 * What tests do to an {@link ElectionRunner} that no user can: a crash, a sighting from another watch, a close that
 * does not wait. Each goes through the runner's {@link LifecycleDriver}, as the runner's own calls do.
 */
final class RunnerHooks {

  private RunnerHooks() {}

  /** Ends {@code runner} as a killed process ends, to other replicas (see {@link LifecycleDriver#crash}). */
  static void crash(ElectionRunner runner) {
    LifecycleDriver driver = runner.driverForTest();
    driver.onLoopAndWait(driver::crash);
  }

  /** What another watch of this process saw of the Lease (see {@link LifecycleDriver#sighted}), on the loop. */
  static void sighted(ElectionRunner runner, LeaseRecord record, long arrivedNanos) {
    LifecycleDriver driver = runner.driverForTest();
    driver.onLoopAndWait(() -> driver.sighted(record, arrivedNanos, false));
  }

  /** Asks {@code runner} to close without waiting: the simulation's single thread is the loop, and cannot wait. */
  static void closeAsync(ElectionRunner runner) {
    runner.driverForTest().requestClose();
  }
}
