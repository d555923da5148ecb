package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.springboot.example.OrdersService;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testsupport.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Runs the example's {@code main} ({@link OrdersService}) as Kubernetes would run its container: a JVM of its
 * own, configured for the API server by fabric8's own system properties (in a pod it would use its service
 * account), with a web server on a free port for the probes. It must lead and reconcile, answer its readiness
 * probe, and on SIGTERM stop its reconciler, release the Lease and exit.
 */
class ExampleApplicationTest {

  private static final String LEASE = "orders-service";
  private static final Pattern PORT = Pattern.compile("Tomcat started on port[^0-9]*(\\d+)");

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** A JVM starting Spring Boot and Tomcat took 14 s on a loaded two-core machine: room for several times that. */
  private static final Duration JVM_DEADLINE = Duration.ofSeconds(90);

  private final List<String> output = new CopyOnWriteArrayList<>();
  private Thread reader;

  @Test
  void theExampleLeadsReconcilesAnswersItsProbesAndReleasesTheLeaseOnSigterm() throws Exception {
    Process process = start();
    try {
      Await.until("the example reconciles as leader; its output:\n" + String.join("\n", output),
          () -> output.stream().anyMatch(line -> line.contains("reconciling orders, pass 2")), JVM_DEADLINE);

      int port = port();
      Await.until("its readiness probe answers 200",
          () -> status(port, "/actuator/health/readiness") == 200, JVM_DEADLINE);
      assertThat(status(port, "/actuator/health/liveness")).isEqualTo(200);
      Await.until("it holds the Lease", () -> "orders-1".equals(lastHolder()), JVM_DEADLINE);

      // SIGTERM: Spring Boot's shutdown hook closes the context. Through the handle: Process.destroy() would also
      // close this end of the child's output, and with it everything the child logs while it shuts down.
      process.toHandle().destroy();

      assertThat(process.waitFor(JVM_DEADLINE.toSeconds(), TimeUnit.SECONDS)).as("the example exited").isTrue();
      reader.join(JVM_DEADLINE.toMillis()); // the rest of its output
      assertThat(process.exitValue()).as("exit status after SIGTERM").isEqualTo(143);
      assertThat(output).anyMatch(line -> line.contains("reconciler stopped after"));
      assertThat(output).anyMatch(line -> line.contains("Released Lease " + api.namespace() + "/" + LEASE));
      assertThat(lastHolder()).as("the Lease's holder after the exit: released").isEmpty();
    } finally {
      process.destroyForcibly();
      // What the example printed, for whoever reads a failure.
      java.nio.file.Files.write(Path.of("target", "example-output.txt"), output);
    }
  }

  private Process start() throws IOException {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"),
        // fabric8 reads these as a controller's client would read a kubeconfig; no kubeconfig, no pod account.
        "-Dkubernetes.master=" + api.replica("orders-1").url(),
        "-Dkubernetes.namespace=" + api.namespace(),
        "-Dkubernetes.auth.tryKubeConfig=false",
        "-Dkubernetes.auth.tryServiceAccount=false",
        OrdersService.class.getName(),
        "--spring.config.name=orders-service",
        "--server.port=0",
        "--logging.level.org.springframework.boot=INFO",
        "--election.identity=orders-1",
        // Timings that a JVM still warming up on a busy two-core machine keeps: at 2 s / 1.5 s / 200 ms it was
        // seen to miss its renew deadline right after it was elected. And a spurious loss contends again
        // instead of ending the process, so that this test checks the start, the probes and the shutdown.
        "--election.lease-duration=6s",
        "--election.renew-deadline=4s",
        "--election.retry-period=500ms",
        "--election.loss-policy=recontend"));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    reader = new Thread(() -> {
      try (BufferedReader lines = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
          output.add(line);
        }
      } catch (IOException ended) {
        // the process ended
      }
    }, "example-output");
    reader.setDaemon(true);
    reader.start();
    return process;
  }

  private String lastHolder() {
    List<LeaseWrite> writes = api.leaseWrites(LEASE);
    return writes.isEmpty() ? null : writes.get(writes.size() - 1).holder();
  }

  private int port() {
    return output.stream().map(PORT::matcher).filter(Matcher::find).map(m -> Integer.parseInt(m.group(1)))
        .findFirst().orElseThrow(() -> new AssertionError("no port in the output:\n" + String.join("\n", output)));
  }

  private static int status(int port, String path) {
    try {
      HttpResponse<Void> response = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).timeout(Duration.ofSeconds(5))
              .build(), HttpResponse.BodyHandlers.discarding());
      return response.statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }
}
