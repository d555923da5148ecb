package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A stand-in for a controller's {@code main} in {@link ThreeProcessFailoverTest}: it finds its API server through
 * {@code KUBECONFIG} and its identity in {@code POD_NAME}, as a pod would, and elects with fabric8's own {@code
 * LeaderElector} (this module does not depend on election-fabric8). SIGTERM cancels the election, which releases
 * the Lease.
 */
final class LeaderElectorReplica {

  static final String LEASE = "toy-controller";

  private LeaderElectorReplica() {}

  public static void main(String[] args) throws Exception {
    String identity = System.getenv("POD_NAME");
    KubernetesClient client = new KubernetesClientBuilder().build(); // KUBECONFIG, as outside a pod
    CompletableFuture<?> election = client.leaderElector()
        .withConfig(new LeaderElectionConfigBuilder()
            .withName(LEASE)
            .withLock(new LeaseLock(client.getNamespace(), LEASE, identity))
            .withLeaseDuration(Duration.ofSeconds(4))
            .withRenewDeadline(Duration.ofSeconds(3))
            .withRetryPeriod(Duration.ofMillis(500))
            .withReleaseOnCancel(true)
            .withLeaderCallbacks(new LeaderCallbacks(
                () -> System.out.println(identity + ": leading"),
                () -> System.out.println(identity + ": stopped leading"),
                leader -> System.out.println(identity + ": the leader is " + leader)))
            .build())
        .build()
        .start();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      election.cancel(true); // releases the Lease if this replica holds it
      client.close();
    }));
    System.out.println(identity + ": contending for " + client.getNamespace() + "/" + LEASE);
    try {
      election.get();
    } catch (Exception stopped) {
      // cancelled by the shutdown hook
    }
    TimeUnit.DAYS.sleep(1); // the shutdown hook ends the process
  }
}
