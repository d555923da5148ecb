package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.github.electionpolicy.testsupport.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The real control plane that {@code tools/kube-apiserver/cluster.sh} started for this build (etcd and
 * kube-apiserver 1.20 on loopback ports): its kubeconfigs, its ports, and the outages a test may cause. Every
 * test that stops a component starts it again before it returns.
 */
final class KubeCluster {

  static final String SA_NAMESPACE = "election-it";
  static final String SA_NAME = "orders-controller";

  final Path dir;
  private final Path script;
  private final Map<String, String> env;

  private KubeCluster(Path dir, Path script) {
    this.dir = dir;
    this.script = script;
    this.env = readEnv(dir.resolve("cluster.env"));
  }

  /** The cluster of this build, from the properties the POM sets; fails when the tests run outside it. */
  static KubeCluster fromSystemProperties() {
    String dir = System.getProperty("election.it.cluster");
    String script = System.getProperty("election.it.script");
    if (dir == null || script == null) {
      throw new IllegalStateException("election.it.cluster and election.it.script are not set; fix: run these "
          + "tests with Maven (mvn -pl election-apiserver-tests -am verify), which starts the cluster first");
    }
    return new KubeCluster(Path.of(dir), Path.of(script));
  }

  private static Map<String, String> readEnv(Path file) {
    try {
      Map<String, String> values = new HashMap<>();
      for (String line : Files.readAllLines(file)) {
        int eq = line.indexOf('=');
        if (eq > 0) {
          values.put(line.substring(0, eq), line.substring(eq + 1));
        }
      }
      return values;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + "; did tools/kube-apiserver/cluster.sh start run?", e);
    }
  }

  Path adminKubeconfig() {
    return dir.resolve("admin.kubeconfig");
  }

  Path nobodyKubeconfig() {
    return dir.resolve("nobody.kubeconfig");
  }

  Path serviceAccountKubeconfig() {
    return dir.resolve("sa.kubeconfig");
  }

  /** What a pod of the service account sees under /var/run/secrets/kubernetes.io/serviceaccount. */
  Path podServiceAccountDir() {
    return dir.resolve("pod/serviceaccount");
  }

  /** The kubectl that build.sh built (1.20, like the server). */
  Path kubectl() {
    return Path.of(env.get("KUBECTL"));
  }

  int apiPort() {
    return Integer.parseInt(env.get("API_PORT"));
  }

  String url() {
    return "https://127.0.0.1:" + apiPort() + "/";
  }

  Path repo() {
    return Path.of(System.getProperty("election.it.repo", ".."));
  }

  /** A client as the cluster's admin (system:masters). */
  KubernetesClient admin() {
    return client(Config.fromKubeconfig(adminKubeconfig().toFile()));
  }

  static KubernetesClient client(Config config) {
    return new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(new JdkHttpClientFactory())
        .build();
  }

  /** The admin's configuration with {@code token} instead of the admin's: another user, same server and CA. */
  Config configWithToken(String token, String namespace) {
    return new ConfigBuilder(Config.fromKubeconfig(adminKubeconfig().toFile()))
        .withOauthToken(token)
        .withNamespace(namespace)
        .build();
  }

  /** Creates a namespace (as admin) and returns its name. */
  static String createNamespace(KubernetesClient admin, String name) {
    admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    return name;
  }

  /** A TokenRequest for a service account, as the kubelet makes for a pod. */
  static String token(KubernetesClient admin, String namespace, String serviceAccount) {
    return admin.serviceAccounts().inNamespace(namespace).withName(serviceAccount)
        .tokenRequest(new TokenRequestBuilder().withNewSpec()
            .withAudiences("https://kubernetes.default.svc").withExpirationSeconds(3600L).endSpec().build())
        .getStatus().getToken();
  }

  /** Writes a kubeconfig for {@code token} (for the command-line tools, which take a file). */
  Path kubeconfigWithToken(Path file, String token, String namespace) throws IOException {
    String original = Files.readString(adminKubeconfig());
    Config admin = Config.fromKubeconfig(adminKubeconfig().toFile());
    String ca = original.lines().filter(l -> l.strip().startsWith("certificate-authority-data:"))
        .findFirst().orElseThrow().strip().substring("certificate-authority-data:".length()).strip();
    return Files.writeString(file, String.join("\n",
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: election-it",
        "  cluster:",
        "    server: " + admin.getMasterUrl(),
        "    certificate-authority-data: " + ca,
        "users:",
        "- name: user",
        "  user:",
        "    token: " + token,
        "contexts:",
        "- name: user",
        "  context:",
        "    cluster: election-it",
        "    user: user",
        "    namespace: " + namespace,
        "current-context: user",
        ""));
  }

  void killApiServer() {
    run("kill-apiserver");
  }

  void startApiServer() {
    run("start-apiserver");
  }

  void killEtcd() {
    run("kill-etcd");
  }

  void startEtcd() {
    run("start-etcd");
  }

  private void run(String command) {
    try {
      Process process = new ProcessBuilder("bash", script.toString(), command, dir.toString())
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.INHERIT)
          .start();
      if (!process.waitFor(90, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError("cluster.sh " + command + " did not finish within 90 s");
      }
      if (process.exitValue() != 0) {
        throw new AssertionError("cluster.sh " + command + " exited with " + process.exitValue()
            + "; see " + dir.resolve("apiserver.log") + " and " + dir.resolve("etcd.log"));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while running cluster.sh " + command, e);
    }
  }

  /** Waits until the admin can list namespaces again (the API server and etcd both answer). */
  void awaitReady(Duration timeout) throws InterruptedException {
    try (KubernetesClient admin = admin()) {
      AtomicReference<RuntimeException> last = new AtomicReference<>();
      boolean answered = Await.holds(() -> {
        try {
          admin.namespaces().withName("default").get();
          return true;
        } catch (RuntimeException e) {
          last.set(e);
          return false;
        }
      }, timeout);
      if (!answered) {
        throw new AssertionError("the cluster did not answer within " + timeout, last.get());
      }
    }
  }

  @Override
  public String toString() {
    return "kube-apiserver at " + url() + " (" + dir + ")";
  }

  static List<String> verbs() {
    return List.of("get", "create", "update", "watch");
  }
}
