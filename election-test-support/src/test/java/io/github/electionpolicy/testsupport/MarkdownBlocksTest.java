package io.github.electionpolicy.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class MarkdownBlocksTest {

  private static final List<String> DOC = List.of(
      "# Title",
      "```sh",
      "not this one",
      "```",
      "<!-- the marker -->",
      "```sh",
      "echo skipped",
      "```",
      "```java",
      "int x = 1;",
      "```");

  @Test
  void theBlockOfTheLanguageAfterTheMarker() {
    assertThat(MarkdownBlocks.blockAfter(DOC, "the marker", "java")).containsExactly("int x = 1;");
  }

  @Test
  void theFirstBlockAfterTheMarkerWhenNoLanguageIsNamed() {
    assertThat(MarkdownBlocks.blockAfter(DOC, "the marker", "")).containsExactly("echo skipped");
  }

  @Test
  void aMissingMarkerOrBlockIsNamed() {
    assertThatThrownBy(() -> MarkdownBlocks.blockAfter(DOC, "no such marker", "java"))
        .hasMessageContaining("no such marker");
    assertThatThrownBy(() -> MarkdownBlocks.blockAfter(DOC, "the marker", "xml"))
        .hasMessageContaining("```xml");
  }

  @Test
  void theTextBetweenTwoMarkers() {
    String text = String.join("\n", DOC);
    assertThat(MarkdownBlocks.between(text, "<!-- the marker -->\n```sh\n", "```")).isEqualTo("echo skipped\n");
    assertThatThrownBy(() -> MarkdownBlocks.between(text, "<!-- absent -->", "```"))
        .hasMessageContaining("<!-- absent -->");
  }
}
