package io.github.electionpolicy.fabric8;

/** Where the services stand, as far as {@link RunnerLifecycle} knows. */
enum RunnerLifecycleServices {
  /** None runs, and no start or stop is in flight. */
  IDLE,
  /** A start is in flight. */
  STARTING,
  /** Every service started and none is stopping. */
  RUNNING,
  /** A stop is in flight, within its deadline. */
  STOPPING,
  /** A stop outlived its deadline: a service may still run, and the runner no longer waits for it. */
  HUNG;

  /** A start is in flight or the services run: they need a stop. */
  boolean active() {
    return this == STARTING || this == RUNNING;
  }
}
