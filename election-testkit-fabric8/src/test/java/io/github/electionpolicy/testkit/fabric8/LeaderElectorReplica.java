package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A stand-in for a controller's {@code main} in {@link ThreeProcessFailoverTest}: it finds its API server through
 * {@code KUBECONFIG} and its identity in {@code POD_NAME}, as a pod would, and elects with fabric8's own {@code
 * LeaderElector} (this module does not depend on election-fabric8). SIGTERM stops the election and releases the
 * Lease (fabric8's elector keeps its name in it and shortens it to one second) before the client closes.
 */
final class LeaderElectorReplica {

  static final String LEASE = "toy-controller";

  private LeaderElectorReplica() {}

  public static void main(String[] args) throws Exception {
    String identity = System.getenv("POD_NAME");
    KubernetesClient client = new KubernetesClientBuilder().build(); // KUBECONFIG, as outside a pod
    LeaderElector elector = client.leaderElector()
        .withConfig(new LeaderElectionConfigBuilder()
            .withName(LEASE)
            .withLock(new LeaseLock(client.getNamespace(), LEASE, identity))
            .withLeaseDuration(Duration.ofSeconds(4))
            .withRenewDeadline(Duration.ofSeconds(3))
            .withRetryPeriod(Duration.ofMillis(500))
            .withReleaseOnCancel(false) // released below, before the client closes
            .withLeaderCallbacks(new LeaderCallbacks(
                () -> System.out.println(identity + ": leading"),
                () -> System.out.println(identity + ": stopped leading"),
                leader -> System.out.println(identity + ": the leader is " + leader)))
            .build())
        .build();
    CompletableFuture<?> election = elector.start();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      election.cancel(true); // no more renewals
      for (int attempt = 0; attempt < 3; attempt++) {
        try {
          elector.release(); // only if this replica holds the Lease
          break;
        } catch (KubernetesClientException conflict) {
          // a renewal still in flight changed the Lease: read it again
        }
      }
      client.close();
    }));
    System.out.println(identity + ": contending for " + client.getNamespace() + "/" + LEASE);
    try {
      election.get();
    } catch (Exception stopped) {
      // cancelled by the shutdown hook
    }
    Thread.currentThread().join(); // blocks for ever: the shutdown hook ends the process
  }
}
