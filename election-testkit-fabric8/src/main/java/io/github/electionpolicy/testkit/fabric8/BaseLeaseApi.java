package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;

/** What both targets share: the clients, the Lease helpers and the order of tear-down. Thread-safe. */
abstract class BaseLeaseApi implements LeaseApi {

  private final String namespace;
  private final AtomicInteger generatedNames = new AtomicInteger();
  /** Closed in reverse order: watches and clients before the proxies they use. */
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private KubernetesClient observer;
  private boolean closed;

  BaseLeaseApi(String namespace) {
    this.namespace = namespace;
  }

  /** A client to {@code url}, or to the target's own server when {@code url} is null. */
  abstract Config config(String url);

  /** Where the fixture's own client connects: through a proxy of its own on the embedded server. */
  abstract String observerUrl();

  /** What only the embedded server can do fails here with a message saying what to do instead. */
  static IllegalStateException embeddedOnly(String what) {
    return new IllegalStateException(what + " needs the embedded Lease API, but -D"
        + ApiServerTarget.KUBECONFIG_PROPERTY + " points the fixture at a real API server; fix: call "
        + "assumeEmbedded() at the start of this test, so it is skipped against a real server");
  }

  final KubernetesClient newClient(String url, String replica) {
    ConfigBuilder builder = new ConfigBuilder(config(url)).withNamespace(namespace);
    if (replica != null) {
      builder.withUserAgent(USER_AGENT_PREFIX + replica);
    }
    KubernetesClient client = plainHttpAsHttp11(new KubernetesClientBuilder(), builder.build()).build();
    track(client);
    return client;
  }

  /**
   * {@code clients} with {@code config} and the JDK HTTP client, which speaks HTTP/1.1 to a server in plain text
   * (the embedded server, and the proxies in front of it). The JDK client's default, HTTP/2, would ask a plain-text
   * server to upgrade (h2c); fabric8's mock server accepts, and then now and then a response reaches the client out of
   * its frames ("Frame type(101) length(6644083) exceeds MAX_FRAME_SIZE(16384)", a list failed), or never does, for
   * this request and every later one on that connection: a list and watch that is never answered, however often it is
   * started again (seen as a 30 s timeout in the build, on fabric8 7.6.1). A real API server over TLS negotiates its
   * protocol (ALPN) as it would for a user's controller, so its clients keep the default.
   */
  static KubernetesClientBuilder plainHttpAsHttp11(KubernetesClientBuilder clients, Config config) {
    clients.withConfig(config).withHttpClientFactory(new JdkHttpClientFactory());
    if (config.getMasterUrl() != null && config.getMasterUrl().startsWith("http:")) {
      clients.withHttpClientBuilderConsumer(io.fabric8.kubernetes.client.http.HttpClient.Builder::preferHttp11);
    }
    return clients;
  }

  final synchronized <T extends AutoCloseable> T track(T closeable) {
    if (closed) {
      closeQuietly(closeable);
      throw new IllegalStateException("this LeaseApi is closed; fix: use it only between start() and close() "
          + "(with LeaseApiExtension: only inside a test)");
    }
    closeables.add(closeable);
    return closeable;
  }

  /** A client of the fixture's own, for reads and foreign writes; it counts as no replica. */
  final synchronized KubernetesClient observer() {
    if (observer == null) {
      observer = newClient(observerUrl(), null);
    }
    return observer;
  }

  @Override
  public final void assumeEmbedded() {
    Assumptions.assumeTrue(isEmbedded(), () -> "needs the embedded Lease API; -D"
        + ApiServerTarget.KUBECONFIG_PROPERTY + " points the fixture at a real API server");
  }

  @Override
  public final String namespace() {
    return namespace;
  }

  @Override
  public final KubernetesClient client() {
    return replica("client-" + generatedNames.incrementAndGet()).client();
  }

  @Override
  public final List<LeaseWrite> leaseWrites(String leaseName) {
    Objects.requireNonNull(leaseName, "leaseName");
    return leaseWrites().stream()
        .filter(write -> write.namespace().equals(namespace) && write.name().equals(leaseName))
        .collect(Collectors.toList());
  }

  @Override
  public final Optional<Lease> lease(String leaseName) {
    return Optional.ofNullable(observer().leases().inNamespace(namespace).withName(leaseName).get());
  }

  @Override
  public final List<String> watchHolders(String leaseName) {
    List<String> holders = new CopyOnWriteArrayList<>();
    Watch watch = observer().leases().inNamespace(namespace).withName(leaseName).watch(new Watcher<Lease>() {
      @Override
      public void eventReceived(Action action, Lease lease) {
        String holder = lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
        holders.add(holder == null ? "" : holder);
      }

      @Override
      public void onClose(WatcherException cause) {}
    });
    track(watch);
    return holders;
  }

  @Override
  public final void overwriteHolder(String leaseName, String holder) {
    while (true) {
      Lease current = lease(leaseName).orElseThrow(() -> new IllegalStateException(
          "Lease " + namespace + "/" + leaseName + " does not exist, so there is no holder to overwrite"));
      try {
        observer().leases().inNamespace(namespace).resource(
            new LeaseBuilder(current).editSpec().withHolderIdentity(holder).endSpec().build()).update();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
      }
    }
  }

  /** Closes what was handed out, newest first; then {@link #shutDown()}. */
  @Override
  public final void close() {
    List<AutoCloseable> toClose;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      toClose = new ArrayList<>(closeables);
    }
    for (int i = toClose.size() - 1; i >= 0; i--) {
      closeQuietly(toClose.get(i));
    }
    shutDown();
  }

  /** Stops the server or deletes the namespace, once everything handed out is closed. */
  abstract void shutDown();

  static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception ignored) {
      // Best effort: a test may have closed it already, or closed it abruptly.
    }
  }
}
