package io.github.electionpolicy.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.MarkdownBlocks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The tables in the README and the docs are the one in {@link TruthTable}, character for character. */
class ConfigurationDocTest {

  private static final String START = "<!-- truth-table:start -->\n";
  private static final String END = "<!-- truth-table:end -->";

  @ParameterizedTest
  @ValueSource(strings = {"../docs/configuration.md", "../README.md"})
  void documentEmbedsTheGeneratedTruthTable(String path) throws IOException {
    // Surefire runs in the module's directory and also says so in the basedir property.
    Path doc = Path.of(System.getProperty("basedir", ".")).resolve(path).normalize();
    String text = Files.readString(doc, StandardCharsets.UTF_8);

    assertThat(MarkdownBlocks.between(text, START, END))
        .as("the table between the markers in %s; regenerate it with TruthTable.toMarkdown()", doc)
        .isEqualTo(TruthTable.toMarkdown());
  }
}
