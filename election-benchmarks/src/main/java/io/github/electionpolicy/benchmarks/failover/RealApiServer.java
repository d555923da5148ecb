package io.github.electionpolicy.benchmarks.failover;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A real API server named by a kubeconfig file, through the test fixture's {@link LeaseApi}: the run gets a
 * namespace of its own (created at start, deleted at close), and each replica reaches the server through a
 * loopback TCP proxy of its own that passes TLS through. Thread-safe.
 *
 * <p>What the harness can see differs from the mock's: the proxies cannot read the encrypted requests, so
 * none is counted; the writes the server applied are learnt from a watch on the namespace's Leases (one
 * {@link EventKind#LEASE_WRITE_OK} per event, attributed to the Lease's holder, since on a Lease only its
 * holder renews it and only a replica taking it writes itself in), stamped when the watch delivered the event:
 * some milliseconds after the server applied it, and on a loaded machine up to tens of milliseconds after a
 * replica's own watch delivered the same event, so a lease-duration margin within that jitter proves nothing. A crash drops and refuses the replica's connections at once:
 * no stall needs avoiding here, and a request already on its way may still be applied, as with a dying process.
 */
public final class RealApiServer implements ApiServer {

  private final Path kubeconfig;
  private final LeaseApi api;
  private final Map<String, ReplicaLink> replicas = new ConcurrentHashMap<>();
  private final String version;
  private final Watch writes;

  /**
   * Connects to the server, creates the run's namespace and starts watching its Leases.
   *
   * @param kubeconfig the kubeconfig file; its current context names the server and the credentials
   * @param log where the writes the watch sees are recorded
   * @param namespacePrefix start of the namespace's name; a random suffix follows
   * @throws IllegalStateException when the namespace cannot be created or the watch cannot be opened
   */
  public RealApiServer(Path kubeconfig, EventLog log, String namespacePrefix) {
    this.kubeconfig = kubeconfig;
    this.api = LeaseApi.builder()
        .namespace(namespacePrefix)
        .target(ApiServerTarget.kubeconfig(kubeconfig))
        .start();
    try {
      KubernetesClient observer = api.replica("bench-observer").client();
      this.version = observer.getKubernetesVersion().getGitVersion();
      this.writes = observer.leases().inNamespace(api.namespace()).watch(new Watcher<Lease>() {
        @Override
        public void eventReceived(Action action, Lease lease) {
          if (action == Action.ADDED || action == Action.MODIFIED) {
            String holder = lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
            log.record(EventKind.LEASE_WRITE_OK, holder == null ? "" : holder, "watch " + action + " "
                + lease.getMetadata().getName() + " resourceVersion " + lease.getMetadata().getResourceVersion());
          }
        }

        @Override
        public void onClose(WatcherException cause) {
          // fabric8 reconnects from the last resourceVersion; only a close of the client ends it for good.
        }
      });
    } catch (KubernetesClientException e) {
      api.close();
      throw new IllegalStateException("cannot watch Leases in " + api.namespace() + " on " + api.url()
          + " (kubeconfig=" + kubeconfig + "): HTTP " + e.getCode() + " " + e.getMessage(), e);
    }
  }

  @Override
  public KubernetesClient newClient(String identity) {
    ReplicaLink replica = api.replica(identity);
    replicas.put(identity, replica);
    return replica.client();
  }

  @Override
  public void crash(Collection<String> identities) {
    for (String identity : identities) {
      ReplicaLink replica = replicas.get(identity);
      if (replica != null) {
        replica.refuseConnections();
      }
    }
  }

  @Override
  public void disconnect(String identity) {
    ReplicaLink replica = replicas.remove(identity);
    if (replica != null) {
      replica.close();
    }
  }

  @Override
  public String namespace() {
    return api.namespace();
  }

  @Override
  public String describe() {
    return "real API server " + version + " at " + api.url() + " (kubeconfig=" + kubeconfig + "), namespace "
        + api.namespace() + " (deleted at the end); Lease writes timed when a watch delivered them; Lease requests"
        + " not counted: each replica's proxy passes TLS through and cannot read them";
  }

  @Override
  public void close() {
    writes.close();
    replicas.clear();
    api.close();
  }
}
