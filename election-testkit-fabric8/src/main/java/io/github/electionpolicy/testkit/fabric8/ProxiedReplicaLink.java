package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.function.IntSupplier;

/**
 * A replica behind a proxy of its own; its client is created on first use. Thread-safe.
 */
final class ProxiedReplicaLink implements ReplicaLink {

  private final BaseLeaseApi api;
  private final String name;
  private final TcpProxy proxy;
  /** Counts the replica's requests; null where the server cannot (a real one, behind TLS). */
  private final IntSupplier requests;
  private KubernetesClient client;

  ProxiedReplicaLink(BaseLeaseApi api, String name, TcpProxy proxy, IntSupplier requests) {
    this.api = api;
    this.name = name;
    this.proxy = proxy;
    this.requests = requests;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public synchronized KubernetesClient client() {
    if (client == null) {
      client = api.newClient(proxy.url(), name);
    }
    return client;
  }

  @Override
  public String url() {
    return proxy.url();
  }

  @Override
  public void partition() {
    proxy.blackhole();
  }

  @Override
  public void refuseConnections() {
    proxy.refuse();
  }

  @Override
  public void heal() {
    proxy.restore();
  }

  @Override
  public int requestCount() {
    if (requests == null) {
      throw new IllegalStateException("requestCount() needs the embedded Lease API: a real API server's "
          + "requests pass the proxy encrypted; fix: use connectionCount() (zero connections is zero requests), "
          + "or call assumeEmbedded() at the start of this test");
    }
    return requests.getAsInt();
  }

  @Override
  public int connectionCount() {
    return proxy.connectionCount();
  }

  @Override
  public void close() {
    KubernetesClient toClose;
    synchronized (this) {
      toClose = client;
    }
    if (toClose != null) {
      BaseLeaseApi.closeQuietly(toClose);
    }
    BaseLeaseApi.closeQuietly(proxy);
  }

  @Override
  public String toString() {
    return "replica " + name + " via " + proxy.url();
  }
}
