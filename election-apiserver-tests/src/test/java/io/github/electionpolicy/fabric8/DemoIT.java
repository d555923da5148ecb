package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.examples.Demo;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's demo against the real server, as {@code mvn -pl election-examples exec:java
 * -Dexec.args="--kubeconfig PATH --namespace NS"} runs it: three replicas elect, hand over gracefully, then after a
 * crash; the figures it prints go to docs/performance.md.
 */
class DemoIT {

  private static final Pattern RESULT =
      Pattern.compile("result: graceful take-over (\\d+) ms, crash take-over (\\d+) ms");

  private final KubeCluster cluster = KubeCluster.fromSystemProperties();

  @Test
  void theDemoElectsAndTakesOverOnTheRealServer() {
    String namespace = "demo-" + Long.toHexString(System.nanoTime());
    try (KubernetesClient admin = cluster.admin()) {
      KubeCluster.createNamespace(admin, namespace);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();

      int status = Demo.run(new String[] {"--kubeconfig", cluster.adminKubeconfig().toString(), "--namespace",
          namespace}, new PrintStream(out, true, StandardCharsets.UTF_8),
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
      admin.namespaces().withName(namespace).delete();
    }
  }
}
