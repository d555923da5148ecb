package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three replicas of a controller, each a JVM of its own, on a Lease API served by a fourth (ServeLeaseApi): the
 * leader is killed with SIGKILL and another takes over once the Lease expired; that one is stopped with SIGTERM,
 * releases the Lease (fabric8's elector, which these replicas use, shortens it to one second; election-fabric8
 * empties the holder), and the third takes over.
 */
class ThreeProcessFailoverTest {

  private static final String LEASE = "toy-controller";
  private static final Duration PATIENCE = Duration.ofSeconds(60); // a generous bound, not a measurement

  @TempDir
  Path work;

  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void killWhatIsLeft() {
    processes.forEach(Process::destroyForcibly);
  }

  /** Starts {@code mainClass} in a JVM of its own on this test's class path, its output in {@code name.log}. */
  private Process java(String name, Map<String, String> environment, String mainClass, String... args)
      throws IOException {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
        mainClass));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(work.resolve(name + ".log").toFile());
    builder.environment().keySet().removeAll(List.of(
        "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "LEADER_ELECTION_ENABLED"));
    builder.environment().putAll(environment);
    Process process = builder.start();
    processes.add(process);
    return process;
  }

  @Test
  void aKilledLeaderIsReplacedWhenItsLeaseExpiresAndAStoppedOneHandsOverAtOnce() throws Exception {
    Path kubeconfig = work.resolve("kubeconfig");
    Process server = java("lease-api", Map.of(), ServeLeaseApi.class.getName(),
        "--port", "0", "--kubeconfig", kubeconfig.toString());
    await("the Lease API serves", () -> log("lease-api").contains("kubeconfig: "));

    Map<String, Process> replicas = new LinkedHashMap<>();
    for (String name : List.of("replica-0", "replica-1", "replica-2")) {
      replicas.put(name, java(name, Map.of("KUBECONFIG", kubeconfig.toString(), "POD_NAME", name),
          LeaderElectorReplica.class.getName()));
    }
    String first;
    String second;
    try (KubernetesClient client = new KubernetesClientBuilder()
        .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig))).build()) {
      first = awaitHolder(client, holder -> true);
      replicas.get(first).destroyForcibly().waitFor(); // kill -9: its Lease stays until it expires

      second = awaitHolder(client, holder -> !holder.equals(first));
      Process stopped = replicas.get(second);
      stopped.destroy(); // SIGTERM: its shutdown hook releases the Lease
      assertThat(stopped.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
      assertThat(stopped.exitValue()).as("exit status after SIGTERM").isEqualTo(143);

      String third = awaitHolder(client, holder -> !holder.equals(first) && !holder.equals(second));
      assertThat(process(replicas, third).isAlive()).isTrue();
    }

    server.destroy(); // SIGTERM: prints the last state, stops the server, keeps the kubeconfig
    assertThat(server.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(server.exitValue()).isEqualTo(143);
    assertThat(log("lease-api")).as("the server's write log").containsSubsequence(
        "created", "taken over from \"" + first + "\"", "renewed, duration 4s -> 1s",
        "taken over from \"" + second + "\"",
        "lease-api: stopped; the kubeconfig stays at " + kubeconfig);
    assertThat(kubeconfig).exists();
  }

  /** The replica that holds as {@code holder}: election-fabric8 adds a random suffix to {@code POD_NAME}. */
  private static Process process(Map<String, Process> replicas, String holder) {
    return replicas.entrySet().stream().filter(replica -> holder.startsWith(replica.getKey()))
        .map(Map.Entry::getValue).findFirst()
        .orElseThrow(() -> new AssertionError("the holder " + holder + " is none of " + replicas.keySet()));
  }

  /** Waits until the Lease has a holder that {@code wanted} accepts, and returns it. */
  private String awaitHolder(KubernetesClient client, Predicate<String> wanted) throws InterruptedException {
    String[] holder = new String[1];
    await("a holder of " + LEASE, () -> {
      holder[0] = Optional.ofNullable(client.leases().withName(LEASE).get()).map(Lease::getSpec)
          .map(spec -> spec.getHolderIdentity()).orElse("");
      return !holder[0].isEmpty() && wanted.test(holder[0]);
    });
    return holder[0];
  }

  private String log(String name) {
    try {
      return Files.readString(work.resolve(name + ".log"), StandardCharsets.UTF_8);
    } catch (IOException notYet) {
      return "";
    }
  }

  private void await(String what, Check check) throws InterruptedException {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (!check.holds()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("no " + what + " within " + PATIENCE + "; the server's log:\n" + log("lease-api"));
      }
      // Must wait: polls, since the other processes' logs are files, with nothing to listen to.
      Thread.sleep(100);
    }
  }

  private interface Check {
    boolean holds() throws InterruptedException;
  }
}
