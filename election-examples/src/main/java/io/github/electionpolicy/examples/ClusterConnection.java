package io.github.electionpolicy.examples;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * Where the tools find the API server: an explicit {@code --master} URL, a {@code --kubeconfig} file, or
 * fabric8's own discovery (in-cluster service account, then {@code ~/.kube/config}), the way a controller's
 * {@code new KubernetesClientBuilder().build()} finds it. Every client it makes has bounded timeouts and no
 * retries, so a tool facing an unreachable server answers within seconds instead of hanging.
 *
 * <p>Immutable and thread-safe.
 */
final class ClusterConnection {

  /** How long a tool waits for one answer; the adapter bounds its own Lease calls separately. */
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);

  private final Optional<String> master;
  private final Optional<Path> kubeconfig;
  private final Optional<String> namespace;

  private ClusterConnection(Optional<String> master, Optional<Path> kubeconfig, Optional<String> namespace) {
    this.master = master;
    this.kubeconfig = kubeconfig;
    this.namespace = namespace;
  }

  /**
   * A connection configured from command-line options.
   *
   * @param master the {@code --master} URL; with fabric8's discovery, its credentials (if any) still apply,
   *     as with kubectl's {@code --server}
   * @param kubeconfig the {@code --kubeconfig} file; without either, fabric8's discovery
   */
  static ClusterConnection of(Optional<String> master, Optional<Path> kubeconfig) {
    kubeconfig.ifPresent(file -> {
      if (!Files.isReadable(file)) {
        throw new InvalidOptionException("--kubeconfig", file.toString(), "a readable kubeconfig file",
            "pass the path of an existing kubeconfig, e.g. ~/.kube/config");
      }
    });
    master.ifPresent(url -> {
      if (!url.startsWith("http://") && !url.startsWith("https://")) {
        throw new InvalidOptionException("--master", url, "an http:// or https:// URL",
            "pass the API server's URL, e.g. https://127.0.0.1:6443");
      }
    });
    return new ClusterConnection(master, kubeconfig, Optional.empty());
  }

  /** A connection to a server this process started, with the namespace the demo uses there. */
  static ClusterConnection embedded(String url, String namespace) {
    return new ClusterConnection(Optional.of(url), Optional.empty(), Optional.of(namespace));
  }

  boolean isExplicit() {
    return master.isPresent() || kubeconfig.isPresent();
  }

  /** A new client of its own: each replica of the demo has one, as each pod would. */
  KubernetesClient newClient() {
    return new KubernetesClientBuilder()
        .withConfig(config())
        .withHttpClientFactory(new JdkHttpClientFactory())
        .build();
  }

  Config config() {
    Config base;
    if (namespace.isPresent()) {
      base = Config.empty();
    } else if (kubeconfig.isPresent()) {
      base = Config.fromKubeconfig(kubeconfig.get().toFile());
    } else {
      base = Config.autoConfigure(null);
    }
    ConfigBuilder config = new ConfigBuilder(base)
        .withRequestTimeout((int) REQUEST_TIMEOUT.toMillis())
        .withConnectionTimeout((int) CONNECT_TIMEOUT.toMillis())
        .withRequestRetryBackoffLimit(0);
    master.ifPresent(config::withMasterUrl);
    namespace.ifPresent(config::withNamespace);
    return config.build();
  }

  /** The URL of the API server the clients talk to, as resolved, for the output. */
  String masterUrl() {
    return config().getMasterUrl();
  }
}
