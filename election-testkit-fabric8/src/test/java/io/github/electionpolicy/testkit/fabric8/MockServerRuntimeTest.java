package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The embedded Lease API refuses to start on a Netty that its mock server's Vert.x cannot use, instead of logging
 * an {@code ACCEPT_QUERY} error on the server's threads and leaving every replica without a leader.
 */
class MockServerRuntimeTest {

  private static String classPath() {
    return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
  }

  /** Runs {@link StartEmbeddedLeaseApi} on {@code classPath} and returns what it printed. */
  private static String startOn(String classPath) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", classPath, StartEmbeddedLeaseApi.class.getName()).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("ended\n%s", output).isTrue();
    return output;
  }

  @Test
  void startsOnTheNettyItsVertxIsBuiltWith() throws Exception {
    assertThat(startOn(classPath())).contains("started: http://");
  }

  @Test
  void refusesToStartOnTheOlderNettySpringBoot407ManagesAndNamesTheFix() throws Exception {
    List<String> entries = Arrays.asList(classPath().split(File.pathSeparator));
    assertThat(entries).as("this module's test class path").anyMatch(entry -> entry.contains("vertx-core-5."));
    Path oldNetty = Path.of(System.getProperty("oldNetty.directory", "target/old-netty"),
        "netty-codec-http-4.2.15.Final.jar");
    assertThat(oldNetty).as("copied by the build (maven-dependency-plugin)").exists();
    String withOldNetty = entries.stream()
        .map(entry -> entry.matches(".*netty-codec-http-[0-9.]+Final\\.jar") ? oldNetty.toString() : entry)
        .collect(Collectors.joining(File.pathSeparator));

    assertThat(startOn(withOldNetty))
        .contains("refused: java.lang.IllegalStateException: Netty=4.2.15.Final (io.netty:netty-codec-http on "
            + "the test class path) is not valid: fabric8's mock server, the embedded Lease API, runs on Vert.x "
            + "5.2.0, which fails against it (java.lang.NoSuchFieldError: ACCEPT_QUERY)")
        .contains("fix: with spring-boot-starter-parent as the parent, set the property netty.version to that "
            + "version; with Spring Boot's BOM (spring-boot-dependencies) imported, import io.netty:netty-bom at "
            + "that version before it");
  }
}
