package io.github.electionpolicy.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.MarkdownBlocks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * docs/metrics.md says what the build does: its dependency snippet names this module and the Micrometer it is
 * built with, and its Java block is the runnable example's own code. (What the docs say about the scrape and
 * the alerts is checked against a real scrape in {@link PrometheusScrapeExampleTest}.)
 */
class MetricsDocsTest {

  static final Path ROOT = Path.of(System.getProperty("basedir", ".")).resolve("..").normalize();
  static final Path DOC = ROOT.resolve("docs/metrics.md");
  private static final Path EXAMPLE = Path.of(System.getProperty("basedir", "."))
      .resolve("src/test/java/io/github/electionpolicy/micrometer/PrometheusScrapeExample.java");
  private static final Pattern COORDINATES = Pattern.compile(
      "<groupId>([^<]+)</groupId>\\s*<artifactId>([^<]+)</artifactId>(?:\\s*<version>([^<]+)</version>)?");

  static String doc() throws IOException {
    return Files.readString(DOC, StandardCharsets.UTF_8);
  }

  /** The fenced block right after {@code <!-- marker:start -->}, up to {@code <!-- marker:end -->}. */
  static String markedBlock(String text, String marker, String language) {
    String start = "<!-- " + marker + ":start -->\n```" + language + "\n";
    String end = "```\n<!-- " + marker + ":end -->";
    return MarkdownBlocks.between(text, start, end);
  }

  @Test
  void theDependencySnippetNamesThisModuleAndTheMicrometerItIsBuiltWith() throws IOException {
    String doc = doc();
    int heading = doc.indexOf("## Add the dependency");
    String snippet = doc.substring(doc.indexOf("```xml\n", heading), doc.indexOf("```\n", doc.indexOf("```xml\n",
        heading) + 6));
    List<String> coordinates = new ArrayList<>();
    Matcher matcher = COORDINATES.matcher(snippet);
    while (matcher.find()) {
      coordinates.add(matcher.group(1) + ":" + matcher.group(2)
          + (matcher.group(3) == null ? "" : ":" + matcher.group(3)));
    }

    // The registry's version is the application's (Spring Boot's BOM manages it), not one this page pins.
    assertThat(coordinates).containsExactly(
        "io.github.electionpolicy:election-micrometer:" + System.getProperty("project.version"),
        "io.micrometer:micrometer-registry-prometheus");
    assertThat(doc).contains("built and tested with Micrometer " + System.getProperty("micrometer.version"));
  }

  @Test
  void theJavaBlockIsTheExamplesOwnCode() throws IOException {
    String source = Files.readString(EXAMPLE, StandardCharsets.UTF_8);
    String startMarker = "// metrics-example:start\n";
    String region = source.substring(source.indexOf(startMarker) + startMarker.length(),
        source.indexOf("  // metrics-example:end"));
    String unindented = region.lines().map(line -> line.startsWith("  ") ? line.substring(2) : line)
        .collect(Collectors.joining("\n", "", "\n"));

    assertThat(markedBlock(doc(), "metrics-example", "java"))
        .as("the Java block in %s is PrometheusScrapeExample.startReplica (less its 2-space indent)", DOC)
        .isEqualTo(unindented);
  }

  @Test
  void theReadmeListsTheModuleAndLinksTheDoc() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8);

    assertThat(readme).containsPattern("(?m)^\\| `election-micrometer` \\|.*docs/metrics\\.md");
    assertThat(readme).contains("[docs/metrics.md](docs/metrics.md)");
  }

  @Test
  void theBomManagesTheModule() throws IOException {
    String bom = Files.readString(ROOT.resolve("election-bom/pom.xml"), StandardCharsets.UTF_8);

    assertThat(bom).containsPattern("<groupId>io.github.electionpolicy</groupId>\\s*"
        + "<artifactId>election-micrometer</artifactId>\\s*<version>\\$\\{project.version}</version>");
  }
}
