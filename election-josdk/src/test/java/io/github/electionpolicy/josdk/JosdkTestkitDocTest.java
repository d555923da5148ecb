package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.MarkdownBlocks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The test that docs/josdk.md shows for testing an operator with the testkit is WidgetOperatorTestkitTest. */
class JosdkTestkitDocTest {

  private static final Path MODULE = Path.of(System.getProperty("basedir", "."));
  private static final String START = "<!-- josdk-testkit-example:start -->\n```java\n";
  private static final String END = "```\n<!-- josdk-testkit-example:end -->";

  @Test
  void thePageShowsTheModulesTestkitTestVerbatim() throws IOException {
    String page = Files.readString(MODULE.resolve("../docs/josdk.md").normalize(), StandardCharsets.UTF_8);
    assertThat(MarkdownBlocks.between(page, START, END))
        .as("copy WidgetOperatorTestkitTest.java into docs/josdk.md")
        .isEqualTo(Files.readString(MODULE.resolve(
            "src/test/java/io/github/electionpolicy/josdk/WidgetOperatorTestkitTest.java"), StandardCharsets.UTF_8));
  }
}
