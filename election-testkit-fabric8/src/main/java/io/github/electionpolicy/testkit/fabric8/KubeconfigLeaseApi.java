package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A real API server named by a kubeconfig file, with a namespace of its own for each fixture: created at start,
 * deleted at close. Lease writes are learnt from a watch on the namespace's Leases. Thread-safe.
 */
final class KubeconfigLeaseApi extends BaseLeaseApi {

  static final String MANAGED_BY = "election-testkit-fabric8";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path kubeconfig;
  private final Config base;
  private final List<LeaseWrite> writes = new CopyOnWriteArrayList<>();

  private KubeconfigLeaseApi(Path kubeconfig, Config base, String namespace) {
    super(namespace);
    this.kubeconfig = kubeconfig;
    this.base = base;
  }

  static KubeconfigLeaseApi start(Path kubeconfig, String namespacePrefix) {
    Config base = load(kubeconfig);
    byte[] suffix = new byte[4];
    RANDOM.nextBytes(suffix);
    KubeconfigLeaseApi api = new KubeconfigLeaseApi(kubeconfig, base,
        namespacePrefix + "-" + HexFormat.of().formatHex(suffix));
    try {
      api.createNamespace();
      api.recordWrites();
      return api;
    } catch (RuntimeException e) {
      api.close();
      throw e;
    }
  }

  /** Reads the kubeconfig's current context; fails with a message naming the property and the file. */
  static Config load(Path kubeconfig) {
    try {
      return Config.fromKubeconfig(kubeconfig.toFile());
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(ApiServerTarget.KUBECONFIG_PROPERTY + "=" + kubeconfig + " is not "
          + "valid: the file cannot be read as a kubeconfig (" + e.getMessage() + "); accepted values are the "
          + "path of a kubeconfig with a current context; fix: check it with kubectl --kubeconfig " + kubeconfig
          + " get leases", e);
    }
  }

  private void createNamespace() {
    try {
      observer().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace())
          .addToLabels("app.kubernetes.io/managed-by", MANAGED_BY).endMetadata().build()).create();
    } catch (KubernetesClientException e) {
      throw new IllegalStateException("cannot create the test namespace " + namespace() + " on " + url()
          + " (from " + ApiServerTarget.KUBECONFIG_PROPERTY + "=" + kubeconfig + "): HTTP " + e.getCode() + " "
          + e.getMessage() + "; fix: use a kubeconfig whose user may create and delete namespaces", e);
    }
  }

  private void recordWrites() {
    track(observer().leases().inNamespace(namespace()).watch(new Watcher<Lease>() {
      @Override
      public void eventReceived(Action action, Lease lease) {
        if (action == Action.ADDED || action == Action.MODIFIED) {
          long now = System.nanoTime();
          writes.add(LeaseWrite.of(lease, now, now));
        }
      }

      @Override
      public void onClose(WatcherException cause) {}
    }));
  }

  @Override
  Config config(String url) {
    ConfigBuilder builder = new ConfigBuilder(base);
    if (url != null) {
      builder.withMasterUrl(url);
    }
    return builder.build();
  }

  @Override
  String observerUrl() {
    return null;
  }

  @Override
  public boolean isEmbedded() {
    return false;
  }

  @Override
  public String url() {
    String master = base.getMasterUrl();
    return master.endsWith("/") ? master : master + "/";
  }

  @Override
  public ReplicaLink replica(String name) {
    Objects.requireNonNull(name, "name");
    Optional<InetAddress> loopback = loopbackHost();
    if (loopback.isEmpty()) {
      return track(new DirectReplicaLink(name));
    }
    URI server = URI.create(url());
    int port = server.getPort() != -1 ? server.getPort() : "https".equals(server.getScheme()) ? 443 : 80;
    try {
      return track(new ProxiedReplicaLink(this, name,
          track(new TcpProxy(server.getScheme(), server.getHost(), loopback.get(), port)), null));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open a loopback port for a replica's proxy", e);
    }
  }

  /**
   * The server's address when it is on this machine's loopback interface: then a TCP proxy listening on that same
   * address reaches it, and since the proxy's URL keeps the host name of the server's URL, the server's
   * certificate (which names that host: 127.0.0.1 as the project's script writes it, localhost, or ::1) still
   * matches.
   */
  private Optional<InetAddress> loopbackHost() {
    String host = URI.create(url()).getHost();
    if (host == null || !(host.equals("localhost") || host.startsWith("127.") || host.equals("[::1]"))) {
      return Optional.empty();
    }
    try {
      // What the client itself would connect to for this host (for localhost: the first address it resolves).
      InetAddress address = InetAddress.getByName(host);
      return address.isLoopbackAddress() ? Optional.of(address) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  @Override
  public List<LeaseWrite> leaseWrites() {
    return List.copyOf(writes);
  }

  @Override
  public void denyAccess(Set<String> verbs) {
    throw embeddedOnly("denyAccess");
  }

  @Override
  public void stopServer() {
    throw embeddedOnly("stopServer");
  }

  @Override
  public KubernetesMockServer mockServer() {
    throw embeddedOnly("mockServer");
  }

  @Override
  void shutDown() {
    // A client of its own: the observer is closed by now.
    try (KubernetesClient client = newUntrackedClient()) {
      client.namespaces().withName(namespace()).delete();
    } catch (KubernetesClientException e) {
      System.err.println("election-testkit-fabric8: could not delete the test namespace " + namespace()
          + " (label app.kubernetes.io/managed-by=" + MANAGED_BY + "): " + e.getMessage());
    }
  }

  private KubernetesClient newUntrackedClient() {
    return new io.fabric8.kubernetes.client.KubernetesClientBuilder()
        .withConfig(config(null))
        .withHttpClientFactory(new io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory())
        .build();
  }

  @Override
  public String toString() {
    return "LeaseApi[real API server at " + url() + " from " + kubeconfig + ", namespace " + namespace() + "]";
  }

  /** A replica's client straight to a real server off this machine: no proxy, so no faults. */
  private final class DirectReplicaLink implements ReplicaLink {

    private final String name;
    private KubernetesClient client;

    DirectReplicaLink(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public synchronized KubernetesClient client() {
      if (client == null) {
        client = newClient(null, name);
      }
      return client;
    }

    @Override
    public String url() {
      return KubeconfigLeaseApi.this.url();
    }

    @Override
    public void partition() {
      throw embeddedOnly("ReplicaLink.partition");
    }

    @Override
    public void refuseConnections() {
      throw embeddedOnly("ReplicaLink.refuseConnections");
    }

    @Override
    public void heal() {
      throw embeddedOnly("ReplicaLink.heal");
    }

    @Override
    public int requestCount() {
      throw embeddedOnly("ReplicaLink.requestCount");
    }

    @Override
    public int connectionCount() {
      throw embeddedOnly("ReplicaLink.connectionCount (on a server off the loopback interface)");
    }

    @Override
    public synchronized void close() {
      if (client != null) {
        closeQuietly(client);
      }
    }

    @Override
    public String toString() {
      return "replica " + name + " of " + KubeconfigLeaseApi.this.url();
    }
  }
}
