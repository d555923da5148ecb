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
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * fabric8's mock API server in CRUD mode over plain HTTP on the loopback address, which enforces
 * {@code resourceVersion} conflicts like a real API server, with every Lease request counted per replica in
 * the shared {@link EventLog}. Thread-safe.
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
  }

  /**
   * A new client of its own for one replica, on the JDK HTTP client, with fabric8's default request
   * timeouts and retries; the server attributes its requests to {@code identity}.
   *
   * @param identity the replica's identity
   * @return a client the caller closes
   */
  public KubernetesClient newClient(String identity) {
    Config config = new ConfigBuilder(Config.empty())
        .withMasterUrl(server.url("/"))
        .withNamespace(namespace)
        .withUserAgent(LeaseTrafficDispatcher.USER_AGENT_PREFIX + identity)
        .build();
    return new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientFactory(new JdkHttpClientFactory())
        .build();
  }

  /**
   * From now on the server answers this replica with 503 and applies none of its requests.
   *
   * @param identity the replica's identity
   */
  public void fence(String identity) {
    dispatcher.fence(identity);
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
    server.destroy();
  }
}
