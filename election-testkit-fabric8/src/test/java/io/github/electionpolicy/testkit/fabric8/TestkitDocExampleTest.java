package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The fabric8 user's test that docs/testkit.md shows is the one examples/downstream-ci compiles and runs
 * against the installed artifacts, character for character.
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
    int start = text.indexOf(START);
    int end = text.indexOf(END);
    assertThat(start).as("marker %s in %s", START.strip(), doc).isNotNegative();
    assertThat(end).as("marker %s in %s after the start marker", END.strip(), doc).isGreaterThan(start);

    assertThat(text.substring(start + START.length(), end))
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
}
