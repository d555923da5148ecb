package io.github.electionpolicy.examples;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaseAccessDeniedException;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossHandler;
import io.github.electionpolicy.fabric8.LossPolicy;
import java.io.PrintStream;
import java.util.Optional;

/**
 * One controller replica of the demo, as one pod would run it: its own client, the real {@link
 * ElectionRunner} and a {@link ToyReconciler}.
 *
 * <p>Used from the demo's main thread only; the adapter's threads print through the shared stream.
 */
final class DemoReplica implements AutoCloseable {

  private final String name;
  private final KubernetesClient client;
  private final ElectionRunner runner;
  private boolean closed;

  private DemoReplica(String name, KubernetesClient client, ElectionRunner runner) {
    this.name = name;
    this.client = client;
    this.runner = runner;
  }

  /**
   * Starts a replica: once started, it runs the RBAC preflight, then contends (or, unelected, the reconciler
   * starts at once). A denied verb stops the replica; {@link #startupFailure()} then says which.
   *
   * @param settings the Lease settings, without a loss policy: a lost replica stops contending and says so
   */
  static DemoReplica start(String name, ElectionDecision decision, LeaseSettings.Builder settings,
      ClusterConnection connection, LeadershipTimeline timeline, PrintStream out) {
    KubernetesClient client = connection.newClient();
    try {
      // A real controller would exit on loss (LossPolicy.exit()) and be restarted; the demo keeps its JVM.
      LossPolicy stopOnLoss = LossPolicy.custom(lostTerm -> {
        out.println(Demo.line(name, "lost the Lease; stops contending (a controller would exit and restart)"));
        return LossHandler.AfterLoss.STOP;
      });
      ElectionRunner runner = ElectionRunner.builder()
          .client(client)
          .decision(decision)
          .settings(settings.identity(name).lossPolicy(stopOnLoss).build())
          .service(new ToyReconciler(name, out))
          .listener(timeline.listenerFor(name))
          .listener(new RenewalFailures(name, out))
          .rbacPreflight(true)
          .start();
      return new DemoReplica(name, client, runner);
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  String name() {
    return name;
  }

  boolean leads() {
    return runner.state().kind() == ElectionState.Kind.LEADING;
  }

  /** Why the replica stopped before contending (a Lease verb RBAC denied), if it did. */
  Optional<LeaseAccessDeniedException> startupFailure() {
    return runner.startupFailure();
  }

  /** Where the Lease lives, as the adapter resolved it. */
  String namespace() {
    return runner.namespace().orElse("-");
  }

  /**
   * Simulates a crash: the replica's connection to the API server is cut, so it can neither renew nor
   * release the Lease. Its own loop notices at the renew deadline and stops its reconciler, as a replica
   * cut off by a network partition would; the others must wait for the Lease to expire.
   */
  void kill() {
    client.close();
  }

  @Override
  public void close() {
    closeAndCheckRelease();
  }

  /**
   * Closes the replica as {@link #close()} does and says whether the Lease was left free for the next leader: false
   * when this replica is still the holder after its close (its release got no answer in time, as on an overloaded
   * API server), so the others must wait for the Lease to expire, as after a crash. True also when the Lease could
   * not be read, or when it was never this replica's.
   */
  boolean closeAndCheckRelease() {
    if (closed) {
      return true;
    }
    closed = true;
    runner.close();
    try {
      Lease lease = client.leases().inNamespace(namespace()).withName(FailoverScenario.LEASE_NAME).get();
      return lease == null || lease.getSpec() == null || !name.equals(lease.getSpec().getHolderIdentity());
    } catch (KubernetesClientException | IllegalStateException e) {
      return true; // killed (its client closed), or the read failed: the take-over it times says the rest
    } finally {
      client.close();
    }
  }
}
