package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.examples.Demo;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's demo against the real server, run with the commands docs/testing.md shows (read from that page, with
 * its {@code /tmp/kube} replaced by this build's cluster and its namespace by a fresh one): {@code kubectl create
 * namespace}, then the demo with {@code --kubeconfig} and {@code --namespace}. Three replicas elect, hand over
 * gracefully, then after a crash.
 */
class DemoIT {

  private static final Pattern RESULT =
      Pattern.compile("result: graceful take-over (\\d+) ms, crash take-over (\\d+) ms");
  private static final Pattern EXAMPLE_ARGS = Pattern.compile("-Dexample\\.args=\"([^\"]*)\"");

  private final KubeCluster cluster = KubeCluster.fromSystemProperties();

  /** The shell block of docs/testing.md that follows the marker DemoIT reads. */
  private List<String> documentedCommands() throws IOException {
    List<String> lines = Files.readAllLines(cluster.repo().resolve("docs/testing.md"));
    int marker = lines.indexOf("<!-- DemoIT reads this block. -->");
    assertThat(marker).as("docs/testing.md has the marker DemoIT reads").isNotNegative();
    assertThat(lines.get(marker + 1)).isEqualTo("```sh");
    List<String> block = new ArrayList<>();
    for (int i = marker + 2; !lines.get(i).equals("```"); i++) {
      block.add(lines.get(i));
    }
    return block;
  }

  @Test
  void theDocumentedDemoCommandsElectAndTakeOverOnTheRealServer() throws Exception {
    List<String> commands = documentedCommands();
    assertThat(commands.get(0)).isEqualTo("bash tools/kube-apiserver/cluster.sh start /tmp/kube");
    assertThat(commands.get(commands.size() - 1)).isEqualTo("bash tools/kube-apiserver/cluster.sh stop /tmp/kube");
    String namespace = "demo-" + Long.toHexString(System.nanoTime());
    String kubectlLine = commands.stream().filter(c -> c.startsWith("kubectl ")).findFirst().orElseThrow();
    String demoLine = commands.stream().filter(c -> c.contains("exec:java")).findFirst().orElseThrow();
    assertThat(demoLine).startsWith("mvn -B -q install -DskipTests && mvn -B -q -pl election-examples exec:java ");

    // kubectl --kubeconfig /tmp/kube/admin.kubeconfig create namespace demo, with this build's kubectl and cluster
    List<String> kubectl = new ArrayList<>(List.of(localize(kubectlLine, namespace).split(" ")));
    kubectl.set(0, cluster.kubectl().toString());
    Process created = new ProcessBuilder(kubectl).redirectErrorStream(true).start();
    assertThat(created.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(created.exitValue()).as(new String(created.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
        .isZero();

    Matcher exampleArgs = EXAMPLE_ARGS.matcher(demoLine);
    assertThat(exampleArgs.find()).as("-Dexample.args in %s", demoLine).isTrue();
    String[] args = localize(exampleArgs.group(1), namespace).split(" ");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int status = Demo.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));

    String story = out.toString(StandardCharsets.UTF_8);
    System.out.println(story);
    assertThat(status).as("exit status; stderr: %s", err.toString(StandardCharsets.UTF_8))
        .isEqualTo(Demo.EXIT_OK);
    assertThat(story)
        .contains("LEADS: holds Lease " + namespace + "/election-demo")
        .containsPattern("TOOK OVER \\d+ ms after the leader closed \\(graceful\\)")
        .containsPattern("TOOK OVER \\d+ ms after the leader was killed \\(crash");
    Matcher result = RESULT.matcher(story);
    assertThat(result.find()).as("result line in:%n%s", story).isTrue();
    long graceful = Long.parseLong(result.group(1));
    long crash = Long.parseLong(result.group(2));
    System.out.println("MEASURED real server demo: graceful " + graceful + " ms, crash " + crash + " ms");
    assertThat(graceful).isLessThan(crash);
    assertThat(crash).as("a crashed leader's 2 s Lease must expire first").isGreaterThanOrEqualTo(1500);
    try (KubernetesClient admin = cluster.admin()) {
      admin.namespaces().withName(namespace).delete();
    }
  }

  /** The page's paths and namespace, made this build's. */
  private String localize(String text, String namespace) {
    return text.replace("/tmp/kube/", cluster.dir + "/").replaceAll("\\bdemo\\b", namespace);
  }
}
