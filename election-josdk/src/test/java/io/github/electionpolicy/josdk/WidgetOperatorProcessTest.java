package io.github.electionpolicy.josdk;

import static io.github.electionpolicy.josdk.OperatorReplicas.LEASE;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.github.electionpolicy.josdk.sample.Widget;
import io.github.electionpolicy.josdk.sample.WidgetOperator;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testsupport.Await;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sample operator's {@code main} (the one docs/josdk.md shows) as a process of its own, the way a pod runs it:
 * plain {@code java}, its client configured from the environment (here: fabric8's system properties naming the
 * embedded API server), {@code POD_NAME} set as the downward API would. It must lead and reconcile a widget; on
 * SIGTERM, as Kubernetes stops a pod, its shutdown hook must stop the operator and release the Lease.
 */
class WidgetOperatorProcessTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private Process process;
  private Path output;

  @AfterEach
  void killTheProcess() throws InterruptedException {
    if (process != null && process.isAlive()) {
      process.destroyForcibly().waitFor(Await.GENEROUS.toSeconds(), TimeUnit.SECONDS);
    }
  }

  private String output() {
    try {
      return output == null ? "" : "---- the operator's output:\n" + Files.readString(output, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(output unreadable: " + e + ")";
    }
  }

  private Optional<String> holder() {
    return api.lease(LEASE).map(Lease::getSpec).map(spec -> spec.getHolderIdentity()).filter(h -> !h.isBlank());
  }

  @Test
  void mainLeadsReconcilesAndOnSigtermStopsTheOperatorThenReleasesTheLease() throws Exception {
    String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Dkubernetes.master=" + api.url(),
        "-Dkubernetes.namespace=" + api.namespace(),
        "-Dkubernetes.auth.tryKubeConfig=false",
        "-Dkubernetes.auth.tryServiceAccount=false",
        "-cp", classPath,
        WidgetOperator.class.getName()));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    Map<String, String> environment = builder.environment();
    environment.remove("LEADER_ELECTION_ENABLED");
    environment.remove("KUBERNETES_SERVICE_HOST");
    environment.remove("KUBERNETES_SERVICE_PORT");
    environment.put("POD_NAME", "widget-operator-0");
    output = Files.createTempFile(Path.of(System.getProperty("basedir", ".")).resolve("target"),
        "widget-operator", ".log");
    builder.redirectOutput(output.toFile());
    process = builder.start();

    Await.until("main leads", () -> holder().filter(h -> h.startsWith("widget-operator-0-")).isPresent(),
        this::output);
    String identity = holder().orElseThrow();
    api.client().resources(Widget.class).inNamespace(api.namespace())
        .resource(Widget.named(api.namespace(), "from-main", "green")).create();
    Await.until("main's operator reconciled the widget", () -> Optional.ofNullable(api.client().configMaps()
        .inNamespace(api.namespace()).withName("widget-from-main").get()).isPresent(), this::output);
    ConfigMap marker = api.client().configMaps().inNamespace(api.namespace()).withName("widget-from-main").get();
    assertThat(marker.getData()).containsEntry("reconciledBy", identity).containsEntry("color", "green");

    process.destroy(); // SIGTERM

    assertThat(process.waitFor(Await.GENEROUS.toSeconds(), TimeUnit.SECONDS)).as("exited\n%s", output()).isTrue();
    assertThat(process.exitValue()).as("the exit status after SIGTERM\n%s", output()).isEqualTo(143);
    List<LeaseWrite> writes = api.leaseWrites(LEASE);
    assertThat(writes).extracting(LeaseWrite::holder).as("taken, then released by the shutdown hook\n%s", output())
        .endsWith("").contains(identity);
    assertThat(Files.readString(output, StandardCharsets.UTF_8))
        .contains("Stopped the operator; none of its reconciliations runs any more")
        .contains("Released Lease " + api.namespace() + "/" + LEASE);
    Files.deleteIfExists(output);
    output = null;
  }

}
