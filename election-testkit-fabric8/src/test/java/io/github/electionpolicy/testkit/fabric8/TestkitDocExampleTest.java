package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpecBuilder;
import io.github.electionpolicy.testsupport.MarkdownBlocks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The fabric8 user's test that docs/testkit.md shows is the one examples/downstream-ci compiles and runs
 * against the installed artifacts, character for character; the three-process test it shows is this module's
 * ThreeProcessFailoverTest, and its ServeLeaseApi commands and output are what the command accepts and prints.
 */
class TestkitDocExampleTest {

  private static final String START = "<!-- fabric8-fixture-example:start -->\n```java\n";
  private static final String END = "```\n<!-- fabric8-fixture-example:end -->";
  private static final String EXAMPLE =
      "../examples/downstream-ci/src/test/java/com/example/toycontroller/ToyControllerFailoverTest.java";

  private static Path resolve(String path) {
    // Surefire runs in the module's directory and also says so in the basedir property.
    return Path.of(System.getProperty("basedir", ".")).resolve(path).normalize();
  }

  @Test
  void testkitDocShowsTheDownstreamFailoverTestVerbatim() throws IOException {
    Path doc = resolve("../docs/testkit.md");
    String text = Files.readString(doc, StandardCharsets.UTF_8);
    assertThat(MarkdownBlocks.between(text, START, END))
        .as("the Java block between the markers in %s; copy %s there", doc, EXAMPLE)
        .isEqualTo(Files.readString(resolve(EXAMPLE), StandardCharsets.UTF_8));
  }

  @Test
  void theExampleUsesTheFixturesPublicEntryPoint() throws IOException {
    assertThat(Files.readString(resolve(EXAMPLE), StandardCharsets.UTF_8))
        .contains("@RegisterExtension")
        .contains("LeaseApiExtension.create()")
        .contains("api.replica(identity).client()")
        .contains("api.namespace()");
  }

  private static final Path THREE_PROCESS_TEST = Path.of(
      "src/test/java/io/github/electionpolicy/testkit/fabric8/ThreeProcessFailoverTest.java");
  private static final Pattern WRITE_LINE = Pattern.compile(
      "(\\S+) lease ([^/]+)/(\\S+) rv=(\\d+) holder=\"([^\"]*)\" transitions=(\\d+) duration=(\\d+)s .*");

  private static String between(String text, String start, String end) {
    return MarkdownBlocks.between(text, start, end);
  }

  @Test
  void testkitDocShowsTheThreeProcessTestVerbatim() throws IOException {
    String text = Files.readString(resolve("../docs/testkit.md"), StandardCharsets.UTF_8);
    assertThat(between(text, "<!-- three-process-example:start -->\n```java\n", "```\n<!-- three-process-example:end -->"))
        .as("copy %s into docs/testkit.md", THREE_PROCESS_TEST)
        .isEqualTo(Files.readString(resolve(THREE_PROCESS_TEST.toString()), StandardCharsets.UTF_8));
  }

  @Test
  void testkitDocShowsServeLeaseApiCommandsItAccepts() throws IOException {
    String text = Files.readString(resolve("../docs/testkit.md"), StandardCharsets.UTF_8);
    String commands = between(text, "### Tests that span processes", "```text");
    Matcher invocation = Pattern.compile(ServeLeaseApi.class.getName().replace(".", "\\.")
        + "(?: -Dexec\\.args=\"| )([^\"\\n]+)").matcher(commands);
    int invocations = 0;
    while (invocation.find()) {
      ServeOptions.parse(invocation.group(1).trim().split(" "));
      invocations++;
    }
    assertThat(invocations).as("java -cp and mvn exec:java invocations of ServeLeaseApi").isEqualTo(2);
  }

  @Test
  void testkitDocShowsServeLeaseApiOutputAsItPrintsIt() throws IOException {
    String text = Files.readString(resolve("../docs/testkit.md"), StandardCharsets.UTF_8);
    String output = between(between(text, "### Tests that span processes", "<!-- three-process-example:start"),
        "```text\n", "```");
    List<String> lines = new ArrayList<>();
    output.lines().map(String::strip).forEach(lines::add);
    assertThat(lines.get(0)).matches("lease-api: embedded Lease API at http://localhost:\\d+/ \\(fabric8 mock "
        + "server, CRUD mode\\), namespace default");
    assertThat(lines.get(1)).matches("port: \\d+");
    assertThat(lines.get(2)).startsWith("kubeconfig: /");
    LeaseWrite before = null;
    int writes = 0;
    for (String line : lines.subList(3, lines.size())) {
      Matcher write = WRITE_LINE.matcher(line);
      if (!write.matches()) {
        continue;
      }
      LeaseWrite shown = new LeaseWrite(write.group(2), write.group(3), Long.parseLong(write.group(4)), 0, 0,
          new LeaseSpecBuilder().withHolderIdentity(write.group(5))
              .withLeaseTransitions(Integer.parseInt(write.group(6)))
              .withLeaseDurationSeconds(Integer.parseInt(write.group(7))).build());
      assertThat(line).as("what ServeLeaseApi prints for this write after the one shown before it")
          .isEqualTo(LeaseWriteLines.line(Instant.parse(write.group(1)), shown, before));
      before = shown;
      writes++;
    }
    assertThat(writes).isEqualTo(4);
    assertThat(String.join("\n", lines.subList(3 + writes, lines.size())).strip()).matches(
        "lease-api: stopping \\(SIGTERM or exit\\)\n"
            + "lease default/orders: holder \"orders-1-c3v8n\", transitions=2, \\d+ writes\n"
            + "lease-api: stopped; the kubeconfig stays at /\\S+");
  }
}
