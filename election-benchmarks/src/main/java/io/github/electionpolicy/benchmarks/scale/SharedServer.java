package io.github.electionpolicy.benchmarks.scale;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The API server of a scale run: the test fixture's embedded Lease API (fabric8's mock server in CRUD mode,
 * answering access reviews), or a real one named by a kubeconfig, in a namespace of the run's own; and the
 * clients the runs share. Unlike the failover benchmark's servers, clients reach the server directly, through
 * no proxy: the run measures the threads of one client as a controller would have it. Not thread-safe.
 */
final class SharedServer implements AutoCloseable {

  private final LeaseApi api;
  private final Optional<Path> kubeconfig;
  private int clientThreads;

  SharedServer(Optional<Path> kubeconfig) {
    this(kubeconfig, 0);
  }

  /**
   * As {@link #SharedServer(Optional)}; the embedded server holds each answer's body back {@code latencyMillis}
   * (not a watch's), a round trip that waits instead of computing, as a server across a network would.
   */
  SharedServer(Optional<Path> kubeconfig, long latencyMillis) {
    this.kubeconfig = kubeconfig;
    LeaseApi.Builder builder = LeaseApi.builder()
        .namespace("scale")
        .target(kubeconfig.map(ApiServerTarget::kubeconfig).orElseGet(ApiServerTarget::embedded));
    if (latencyMillis > 0 && kubeconfig.isEmpty()) {
      builder.dispatcher(delegate -> new io.fabric8.mockwebserver.http.Dispatcher() {
        @Override
        public io.fabric8.mockwebserver.http.MockResponse dispatch(
            io.fabric8.mockwebserver.http.RecordedRequest request) {
          io.fabric8.mockwebserver.http.MockResponse answer = delegate.dispatch(request);
          String path = request.getPath() == null ? "" : request.getPath();
          return path.contains("watch=true") ? answer
              : answer.setBodyDelay(java.time.Duration.ofMillis(latencyMillis));
        }
      });
    }
    this.api = builder.start();
  }

  String namespace() {
    return api.namespace();
  }

  /**
   * The clients built from now on bound both of their executors to {@code threads} (0: fabric8's defaults,
   * unbounded cached pools): the JDK HTTP client's (given through {@link JdkHttpClientFactory}'s {@code
   * additionalConfig}) and fabric8's task executor ({@link KubernetesClientBuilder#withTaskExecutor}).
   */
  SharedServer clientThreads(int threads) {
    this.clientThreads = threads;
    return this;
  }

  String describe() {
    return (kubeconfig.isPresent() ? "real API server (kubeconfig=" + kubeconfig.get() + ")"
        : "embedded mock API server (fabric8 CRUD mode, access reviews answered)") + " at " + api.url()
        + ", namespace " + api.namespace() + "; one shared client (JDK HTTP client, "
        + (clientThreads == 0 ? "fabric8 defaults" : "its HTTP and task executors fixed at " + clientThreads
            + " threads each") + "), no proxy";
  }

  /**
   * A new client, JDK HTTP client and fabric8's default request settings, defaulting to the run's namespace.
   *
   * @param interceptor sees every request and response, or null
   * @return the client; the caller closes it
   */
  KubernetesClient newClient(Interceptor interceptor) {
    Config base = kubeconfig.map(path -> Config.fromKubeconfig(path.toFile()))
        .orElseGet(() -> new ConfigBuilder(Config.empty()).withMasterUrl(api.url()).build());
    KubernetesClientBuilder builder = new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder(base).withNamespace(api.namespace()).build());
    if (clientThreads == 0) {
      builder.withHttpClientFactory(new JdkHttpClientFactory());
    } else {
      java.util.concurrent.ExecutorService http = fixed(clientThreads, "client-http-");
      builder.withHttpClientFactory(new JdkHttpClientFactory() {
        @Override
        protected void additionalConfig(java.net.http.HttpClient.Builder client) {
          client.executor(http);
        }
      }).withTaskExecutor(fixed(clientThreads, "client-tasks-"));
    }
    if (interceptor != null) {
      builder.withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("probe", interceptor));
    }
    return builder.build();
  }

  private static java.util.concurrent.ExecutorService fixed(int threads, String prefix) {
    java.util.concurrent.atomic.AtomicInteger count = new java.util.concurrent.atomic.AtomicInteger();
    return java.util.concurrent.Executors.newFixedThreadPool(threads, task -> {
      Thread thread = new Thread(task, prefix + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    });
  }

  @Override
  public void close() {
    api.close();
  }
}
