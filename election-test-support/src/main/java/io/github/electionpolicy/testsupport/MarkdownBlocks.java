package io.github.electionpolicy.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The fenced code blocks of the repository's Markdown that tests compare with code or run, each found by a marker
 * (an HTML comment or a line of text) before it. Every failure names the file, the marker and what is missing, so
 * the message says which doc to fix.
 *
 * <pre>{@code
 * List<String> main = MarkdownBlocks.blockAfter(MarkdownBlocks.lines("README.md"), "is exactly this block", "java");
 * String example = MarkdownBlocks.between(MarkdownBlocks.text("docs/testkit.md"),
 *     "<!-- example:start -->\n```java\n", "```\n<!-- example:end -->");
 * }</pre>
 *
 * <p>Stateless and thread-safe.
 */
public final class MarkdownBlocks {

  private MarkdownBlocks() {}

  /**
   * The repository's root: the parent of the module Maven runs the tests in ({@code basedir}, else the working
   * directory).
   *
   * @return the root, normalized
   */
  public static Path root() {
    return Path.of(System.getProperty("basedir", ".")).toAbsolutePath().resolve("..").normalize();
  }

  /**
   * The lines of a file of the repository.
   *
   * @param relativePath the file, from the repository's root, e.g. {@code docs/fabric8.md}
   * @return its lines
   * @throws UncheckedIOException when it cannot be read
   */
  public static List<String> lines(String relativePath) {
    try {
      return Files.readAllLines(root().resolve(relativePath), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + root().resolve(relativePath), e);
    }
  }

  /**
   * The text of a file of the repository.
   *
   * @param relativePath the file, from the repository's root
   * @return its text
   * @throws UncheckedIOException when it cannot be read
   */
  public static String text(String relativePath) {
    try {
      return Files.readString(root().resolve(relativePath), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + root().resolve(relativePath), e);
    }
  }

  /**
   * The lines inside the first fenced block after the first line that contains {@code marker}, fences excluded.
   *
   * @param document the document's lines
   * @param marker text of a line before the block
   * @param language the block's language as its opening fence names it ({@code java}, {@code xml}); empty for the
   *     first block whatever its language
   * @return the block's lines, a view of {@code document}
   * @throws AssertionError when the marker, the block or its end is missing
   */
  public static List<String> blockAfter(List<String> document, String marker, String language) {
    int markerLine = -1;
    for (int i = 0; i < document.size() && markerLine < 0; i++) {
      if (document.get(i).contains(marker)) {
        markerLine = i;
      }
    }
    if (markerLine < 0) {
      throw new AssertionError("no line \"" + marker + "\" before the block");
    }
    int open = markerLine + 1;
    while (open < document.size() && !(language.isEmpty() ? document.get(open).startsWith("```")
        : document.get(open).equals("```" + language))) {
      open++;
    }
    if (open >= document.size()) {
      throw new AssertionError("no ```" + language + " block after \"" + marker + "\"");
    }
    int close = open + 1;
    while (close < document.size() && !document.get(close).equals("```")) {
      close++;
    }
    if (close >= document.size()) {
      throw new AssertionError("no end of the ```" + language + " block after \"" + marker + "\"");
    }
    return document.subList(open + 1, close);
  }

  /**
   * The text between the first {@code start} and the first {@code end} after it, both excluded.
   *
   * @param text the document
   * @param start what comes just before, e.g. {@code "<!-- x:start -->\n```java\n"}
   * @param end what comes just after, e.g. {@code "```\n<!-- x:end -->"}
   * @return the text between them
   * @throws AssertionError when either is missing
   */
  public static String between(String text, String start, String end) {
    int from = text.indexOf(start);
    if (from < 0) {
      throw new AssertionError("no \"" + start.strip() + "\" in the document");
    }
    from += start.length();
    int to = text.indexOf(end, from);
    if (to < 0) {
      throw new AssertionError("no \"" + end.strip() + "\" after \"" + start.strip() + "\"");
    }
    return text.substring(from, to);
  }
}
