package io.github.electionpolicy.benchmarks.failover;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code -Dfailover.args="..."} in docs/performance.md is a command a reader copies: each must parse, and
 * one that names a kubeconfig must select the real server. The kubeconfig a command names is replaced by a file
 * of the same shape, since the cluster it comes from is not running here.
 */
class FailoverBenchmarkDocTest {

  private static final Pattern ARGS = Pattern.compile("-Dfailover\\.args=\"([^\"]*)\"");

  @TempDir
  Path dir;

  @Test
  void everyCommandOnThePerformancePageParsesAndTheRealServerOnesSelectTheRealServer() throws IOException {
    String page = Files.readString(Path.of(System.getProperty("basedir", ".")).resolve("../docs/performance.md")
        .normalize());
    Path kubeconfig = Files.writeString(dir.resolve("admin.kubeconfig"), """
        apiVersion: v1
        kind: Config
        clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
        users: [{name: u, user: {token: t}}]
        contexts: [{name: x, context: {cluster: c, user: u}}]
        current-context: x
        """);
    List<String> commands = new ArrayList<>();
    Matcher m = ARGS.matcher(page);
    while (m.find()) {
      commands.add(m.group(1));
    }

    assertThat(commands).anyMatch(c -> c.contains("kubeconfig=")).anyMatch(c -> !c.contains("kubeconfig="));
    for (String command : commands) {
      String[] args = Arrays.stream(command.trim().split("\\s+"))
          .map(a -> a.startsWith("kubeconfig=") ? "kubeconfig=" + kubeconfig : a)
          .toArray(String[]::new);
      BenchmarkSettings settings = BenchmarkSettings.parse(args);
      assertThat(settings.serverMode()).as(command)
          .isEqualTo(command.contains("kubeconfig=") ? ServerMode.real(kubeconfig) : ServerMode.mock());
    }
  }
}
