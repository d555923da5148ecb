package io.github.electionpolicy.fabric8;

import java.util.Map;
import java.util.function.Consumer;

/** Builds the runner of one of a sharded controller's Leases: the seam between {@link ShardDriver} and the Lease calls. */
interface ShardLeaseRunners {

  /**
   * A runner, not started, for the Lease {@code leaseName}, running {@code service} while it holds it.
   *
   * @param membership whether this is the membership Lease (it runs no work, recontends after a loss, and runs
   *     the RBAC preflight if one is asked for)
   */
  LeaseRunner open(String leaseName, LeaderService service, boolean membership);

  /** A runner, and how to change the annotations its next writes carry (a member's leaving mark). */
  record LeaseRunner(LifecycleDriver driver, Consumer<Map<String, String>> annotate) {}
}
