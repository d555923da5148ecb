package io.github.electionpolicy.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.MarkdownBlocks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * examples/quickstart is the README's quickstart, which the build runs (examples/quickstart/run.sh): its pom
 * declares exactly the README's Maven coordinates and its {@code main} is exactly the README's {@code main}
 * block. Change one, change the other; these tests name the file to change.
 */
class QuickstartMirrorsReadmeTest {

  private static final Path ROOT = Path.of(System.getProperty("basedir", ".")).resolve("..").normalize();
  private static final String POM_MARKER = "examples/quickstart/pom.xml has exactly these coordinates";
  private static final String MAIN_MARKER = "examples/quickstart's OrdersController.main is exactly this block";
  private static final String MAIN_SIGNATURE = "  public static void main(String[] args) throws InterruptedException {";

  private static List<String> lines(String relativePath) throws IOException {
    return Files.readAllLines(ROOT.resolve(relativePath), StandardCharsets.UTF_8);
  }

  /** The lines inside the first fenced block of {@code language} after the line that contains {@code marker}. */
  private static List<String> fencedBlockAfter(List<String> document, String marker, String language) {
    return MarkdownBlocks.blockAfter(document, marker, language);
  }

  private static List<String> trimmed(List<String> lines) {
    return lines.stream().map(String::strip).collect(Collectors.toList());
  }

  @Test
  void theQuickstartPomDeclaresExactlyTheReadmesCoordinates() throws IOException {
    List<String> readme = trimmed(fencedBlockAfter(lines("README.md"), POM_MARKER, "xml"));
    List<String> pom = trimmed(lines("examples/quickstart/pom.xml"));

    int start = Collections.indexOfSubList(pom, readme);
    assertThat(start)
        .as("examples/quickstart/pom.xml contains the README's Maven coordinates block, line for line (indentation "
            + "aside); README block:%n%s", String.join("\n", readme))
        .isNotNegative();
    // The fabric8-7 profile (fabric8's BOM at 7.6.1, as the README advises 7.x users) is not a dependency.
    List<String> outsideProfiles = pom.indexOf("<profiles>") < 0 ? pom
        : pom.subList(0, pom.indexOf("<profiles>"));
    assertThat(outsideProfiles.stream().filter("<dependency>"::equals).count())
        .as("examples/quickstart/pom.xml declares no dependency beyond the README's")
        .isEqualTo(readme.stream().filter("<dependency>"::equals).count());
  }

  @Test
  void theQuickstartMainIsTheReadmesMainBlock() throws IOException {
    List<String> readme = fencedBlockAfter(lines("README.md"), MAIN_MARKER, "java");
    List<String> controller = lines("examples/quickstart/src/main/java/com/example/orders/OrdersController.java");

    int signature = controller.indexOf(MAIN_SIGNATURE);
    assertThat(signature).as("OrdersController declares \"%s\"", MAIN_SIGNATURE.strip()).isNotNegative();
    int end = controller.subList(signature, controller.size()).indexOf("  }") + signature;
    assertThat(end).as("the end of OrdersController.main").isGreaterThan(signature);
    List<String> body = controller.subList(signature + 1, end).stream()
        .map(line -> line.startsWith("    ") ? line.substring(4) : line)
        .collect(Collectors.toList());

    assertThat(body)
        .as("the body of examples/quickstart's OrdersController.main (less its 4-space indent) is the README's "
            + "main block")
        .isEqualTo(readme);
  }

  @Test
  void theFabric8DocsDependencySnippetIsPartOfTheReadmes() throws IOException {
    List<String> readme = trimmed(fencedBlockAfter(lines("README.md"), POM_MARKER, "xml"));
    List<String> docs = trimmed(fencedBlockAfter(lines("docs/fabric8.md"), "# election-fabric8", "xml"));

    assertThat(Collections.indexOfSubList(readme, docs))
        .as("docs/fabric8.md's dependency snippet appears in the README's coordinates block:%n%s",
            String.join("\n", docs))
        .isNotNegative();
  }
}
