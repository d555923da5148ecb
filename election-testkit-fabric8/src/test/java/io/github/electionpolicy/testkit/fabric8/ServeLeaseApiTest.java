package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpecBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** ServeLeaseApi in this JVM: its options, its kubeconfig, its write log and its stop. */
class ServeLeaseApiTest {

  @TempDir
  Path work;

  private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);

  private String printed() {
    return printed.toString(StandardCharsets.UTF_8);
  }

  @Test
  void optionsHaveDefaultsForPortAndNamespace() {
    assertThat(ServeOptions.parse("--kubeconfig", "k"))
        .isEqualTo(new ServeOptions(Path.of("k"), 0, "default"));
    assertThat(ServeOptions.parse("--namespace", "orders", "--port", "8443", "--kubeconfig", "k"))
        .isEqualTo(new ServeOptions(Path.of("k"), 8443, "orders"));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--port 0                      | --kubeconfig=<missing> is not valid: accepted values are a file path (required)",
      "--kubeconfig k --port 70000   | --port=\"70000\" is not valid: accepted values are 0 (a free port",
      "--kubeconfig k --port x       | --port=\"x\" is not valid",
      "--kubeconfig k --namespace A  | --namespace=\"A\" is not valid: accepted values are a DNS label",
      "--kubeconfig k --verbose true | option=\"--verbose\" is not valid: accepted values are --kubeconfig, --port",
      "--kubeconfig                  | --kubeconfig=<missing> is not valid: accepted values are a value after",
  })
  void anOptionItDoesNotAcceptIsNamedWithTheFix(String args, String message) {
    assertThatThrownBy(() -> ServeOptions.parse(args.split(" ")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(message)
        .hasMessageContaining("; fix: ");
  }

  @Test
  void servesOnAFreePortWritesTheKubeconfigAndLogsEachWrite() throws Exception {
    Path kubeconfig = work.resolve("nested/kubeconfig");
    ServeLeaseApi.Running running = ServeLeaseApi.start(ServeOptions.parse("--kubeconfig", kubeconfig.toString(),
        "--namespace", "orders"), out);
    try (KubernetesClient client = new KubernetesClientBuilder()
        .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig))).build()) {
      assertThat(client.getNamespace()).isEqualTo("orders");
      assertThat(client.getMasterUrl().getPort()).isEqualTo(running.port()).isPositive();
      assertThat(printed()).contains("port: " + running.port() + "\n", "kubeconfig: " + kubeconfig + "\n");

      client.leases().resource(new LeaseBuilder().withNewMetadata().withName("orders").endMetadata()
          .withSpec(spec("replica-1", 0)).build()).create();
      client.leases().withName("orders").edit(lease -> new LeaseBuilder(lease).withSpec(spec("", 0)).build());
    } finally {
      running.stop();
    }
    assertThat(printed())
        .containsPattern("\\n\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z lease orders/orders rv=\\d+ holder=\"replica-1\" "
            + "transitions=0 duration=4s created\\n")
        .containsPattern("Z lease orders/orders rv=\\d+ holder=\"\" transitions=0 duration=4s released by "
            + "\"replica-1\"\\n")
        .contains("lease-api: stopping (SIGTERM or exit)\nlease orders/orders: holder \"\" (released), "
            + "transitions=0, 2 writes\nlease-api: stopped; the kubeconfig stays at " + kubeconfig);
    assertThat(kubeconfig).exists();
  }

  @Test
  void servesOnTheGivenPortAndNamesAPortInUse() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    ServeLeaseApi.Running running = ServeLeaseApi.start(
        ServeOptions.parse("--kubeconfig", work.resolve("a").toString(), "--port", String.valueOf(port)), out);
    try {
      assertThat(running.port()).isEqualTo(port);
      assertThat(Files.readString(work.resolve("a"))).contains("    server: http://localhost:" + port + "/\n");
      assertThatThrownBy(() -> ServeLeaseApi.start(
          ServeOptions.parse("--kubeconfig", work.resolve("b").toString(), "--port", String.valueOf(port)), out))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("--port=\"" + port + "\" is not valid: accepted values are 0 (a free port)")
          .hasMessageContaining("fix: pass --port 0, or stop what listens on " + port);
      assertThat(work.resolve("b")).doesNotExist();
    } finally {
      running.stop();
    }
  }

  @Test
  void anOlderKubeconfigIsReplacedOnlyOnceTheServerListens() throws Exception {
    Path kubeconfig = work.resolve("kubeconfig");
    Files.writeString(kubeconfig, "stale");
    ServeLeaseApi.Running running = ServeLeaseApi.start(ServeOptions.parse("--kubeconfig", kubeconfig.toString()), out);
    running.stop();
    assertThat(Files.readString(kubeconfig)).contains("current-context: lease-api");
    assertThat(printed()).contains("leases: none was written");
  }

  @ParameterizedTest(name = "{0} then {1}: {2}")
  @CsvSource(delimiter = '|', value = {
      "a | a | renewed",
      "  | a | acquired",
      "a |   | released by \"a\"",
      "a | b | taken over from \"a\"",
      "  |   | rewritten",
  })
  void eachWriteSaysWhatChanged(String before, String after, String change) {
    assertThat(LeaseWriteLines.change(write(before, 4), write(after, 4))).isEqualTo(change);
    assertThat(LeaseWriteLines.change(null, write(after, 4))).isEqualTo("created");
  }

  @Test
  void aRenewalThatShortensTheLeaseSaysSo() {
    assertThat(LeaseWriteLines.change(write("a", 4), write("a", 1))).isEqualTo("renewed, duration 4s -> 1s");
    assertThat(LeaseWriteLines.line(Instant.parse("2026-12-01T11:40:02.118Z"), write("a", 1), write("a", 4)))
        .isEqualTo("2026-12-01T11:40:02.118Z lease ns/orders rv=7 holder=\"a\" transitions=3 duration=1s "
            + "renewed, duration 4s -> 1s");
  }

  private static LeaseWrite write(String holder, int seconds) {
    LeaseSpec spec = new LeaseSpecBuilder().withHolderIdentity(holder).withLeaseDurationSeconds(seconds)
        .withLeaseTransitions(3).build();
    return new LeaseWrite("ns", "orders", 7, 0, 0, spec);
  }

  private static LeaseSpec spec(String holder, int transitions) {
    return new LeaseSpecBuilder().withHolderIdentity(holder).withLeaseDurationSeconds(4)
        .withLeaseTransitions(transitions).build();
  }
}
