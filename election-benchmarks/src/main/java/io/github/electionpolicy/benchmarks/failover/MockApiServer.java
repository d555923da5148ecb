package io.github.electionpolicy.benchmarks.failover;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * fabric8's mock API server in CRUD mode over plain HTTP on the loopback address, which enforces
 * {@code resourceVersion} conflicts like a real API server, with every Lease request counted per replica in
 * the shared {@link EventLog}. Each replica reaches the server through a {@link ReplicaProxy} of its own, so
 * that a crash can drop its connections the way a dying process does. Thread-safe.
 */
public final class MockApiServer implements AutoCloseable {

  // The mock server logs every request through java.util.logging at INFO; held here so the level sticks.
  private static final Logger MOCK_SERVER_LOGGER = Logger.getLogger("io.fabric8.mockwebserver");

  static {
    MOCK_SERVER_LOGGER.setLevel(Level.WARNING);
  }

  private final KubernetesMockServer server;
  private final LeaseTrafficDispatcher dispatcher;
  private final String namespace;
  private final Map<String, ReplicaProxy> proxies = new ConcurrentHashMap<>();
  private final Handler stallRecorder;

  /**
   * Starts the server on a free port of the loopback address.
   *
   * @param log where Lease requests are recorded
   * @param namespace namespace every replica client uses
   */
  public MockApiServer(EventLog log, String namespace) {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    this.dispatcher = new LeaseTrafficDispatcher(new KubernetesMixedDispatcher(responses), log);
    this.server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, dispatcher, false);
    this.namespace = namespace;
    server.init(InetAddress.getLoopbackAddress(), 0);
    this.stallRecorder = new Handler() {
      @Override
      public void publish(LogRecord record) {
        String message = record.getMessage();
        if (record.getLevel().intValue() >= Level.WARNING.intValue() && message != null
            && message.contains("did not complete")) {
          log.record(EventKind.MOCK_SERVER_STALL, "server", message);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    MOCK_SERVER_LOGGER.addHandler(stallRecorder);
  }

  /**
   * A new client of its own for one replica, on the JDK HTTP client, with fabric8's default request
   * timeouts and retries, connected through a proxy of its own; the server attributes its requests to
   * {@code identity}.
   *
   * @param identity the replica's identity
   * @return a client the caller closes, then calls {@link #disconnect(String)}
   */
  public KubernetesClient newClient(String identity) {
    ReplicaProxy proxy;
    try {
      proxy = new ReplicaProxy(identity, server.getPort());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the proxy of replica " + identity, e);
    }
    proxies.put(identity, proxy);
    Config config = new ConfigBuilder(Config.empty())
        .withMasterUrl(proxy.url())
        .withNamespace(namespace)
        .withUserAgent(LeaseTrafficDispatcher.USER_AGENT_PREFIX + identity)
        .build();
    return new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientFactory(new JdkHttpClientFactory())
        .build();
  }

  /**
   * From now on the server answers this replica with 503 and applies none of its requests, as if its
   * process had died; its connections stay open until {@link #cut(String)}.
   *
   * @param identity the replica's identity
   */
  public void refuse(String identity) {
    dispatcher.fence(identity);
  }

  /**
   * Closes every connection of the replica and refuses new ones, as the kernel of a dead process does.
   *
   * @param identity the replica's identity
   */
  public void cut(String identity) {
    ReplicaProxy proxy = proxies.get(identity);
    if (proxy != null) {
      proxy.cut();
    }
  }

  /**
   * Closes the replica's proxy once its client is closed.
   *
   * @param identity the replica's identity
   */
  public void disconnect(String identity) {
    ReplicaProxy proxy = proxies.remove(identity);
    if (proxy != null) {
      proxy.close();
    }
  }

  /**
   * The namespace every replica client uses.
   *
   * @return the namespace
   */
  public String namespace() {
    return namespace;
  }

  /** Stops the server. */
  @Override
  public void close() {
    proxies.values().forEach(ReplicaProxy::close);
    proxies.clear();
    MOCK_SERVER_LOGGER.removeHandler(stallRecorder);
    server.destroy();
  }
}
