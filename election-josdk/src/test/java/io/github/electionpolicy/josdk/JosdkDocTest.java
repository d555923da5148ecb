package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.github.electionpolicy.testsupport.MarkdownBlocks;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/**
 * docs/josdk.md shows what the build checks: its {@code main} block is the sample's {@code WidgetOperator.main}
 * (which WidgetOperatorProcessTest runs), and its dependency snippet names this module, the election BOM at this
 * version and fabric8's BOM at the version these tests ran on; the README's module table and the BOM list the
 * module.
 */
class JosdkDocTest {

  private static final Path ROOT = Path.of(System.getProperty("basedir", ".")).resolve("..").normalize();
  private static final String MAIN_MARKER = "election-josdk's sample WidgetOperator.main is exactly this block";
  private static final String POM_MARKER = "JosdkDocTest checks this block";
  private static final String MAIN_SIGNATURE =
      "  public static void main(String[] args) throws InterruptedException {";

  private static List<String> lines(String relativePath) throws IOException {
    return Files.readAllLines(ROOT.resolve(relativePath), StandardCharsets.UTF_8);
  }

  /** The lines inside the first fenced block of {@code language} after the line that contains {@code marker}. */
  private static List<String> fencedBlockAfter(List<String> document, String marker, String language) {
    return MarkdownBlocks.blockAfter(document, marker, language);
  }

  private static Element parse(List<String> xml) throws Exception {
    Document document = DocumentBuilderFactory.newInstance().newDocumentBuilder()
        .parse(new InputSource(new StringReader("<project>" + String.join("\n", xml) + "</project>")));
    return document.getDocumentElement();
  }

  /** Each {@code <dependency>} under {@code element} as "groupId:artifactId:version:scope". */
  private static List<String> dependencies(Element element) {
    NodeList dependencies = element.getElementsByTagName("dependency");
    List<String> found = new ArrayList<>();
    for (int d = 0; d < dependencies.getLength(); d++) {
      Element dependency = (Element) dependencies.item(d);
      found.add(text(dependency, "groupId") + ":" + text(dependency, "artifactId") + ":"
          + text(dependency, "version") + ":" + text(dependency, "scope"));
    }
    return found;
  }

  private static String text(Element element, String child) {
    NodeList nodes = element.getElementsByTagName(child);
    return nodes.getLength() == 0 ? "" : nodes.item(0).getTextContent().strip();
  }

  @Test
  void theDocsMainIsTheSamplesMain() throws IOException {
    List<String> doc = fencedBlockAfter(lines("docs/josdk.md"), MAIN_MARKER, "java");
    List<String> sample = lines(
        "election-josdk/src/test/java/io/github/electionpolicy/josdk/sample/WidgetOperator.java");

    int signature = sample.indexOf(MAIN_SIGNATURE);
    assertThat(signature).as("WidgetOperator declares \"%s\"", MAIN_SIGNATURE.strip()).isNotNegative();
    int end = sample.subList(signature, sample.size()).indexOf("  }") + signature;
    List<String> body = sample.subList(signature + 1, end).stream()
        .map(line -> line.startsWith("    ") ? line.substring(4) : line)
        .collect(Collectors.toList());

    assertThat(body).as("the body of WidgetOperator.main (less its 4-space indent) is docs/josdk.md's main block")
        .isEqualTo(doc);
  }

  @Test
  void theDependencySnippetNamesThisModuleTheElectionBomAndFabric8sBomAtTheVersionTheTestsRanOn() throws Exception {
    String fabric8 = System.getProperty("fabric8.expectedVersion");
    String version = System.getProperty("project.version");
    assumeTrue(fabric8 != null && version != null, "run outside Maven: no versions declared");
    Element snippet = parse(fencedBlockAfter(lines("docs/josdk.md"), POM_MARKER, "xml"));

    Element management = (Element) snippet.getElementsByTagName("dependencyManagement").item(0);
    assertThat(dependencies(management))
        .containsExactly("io.fabric8:kubernetes-client-bom:" + fabric8 + ":import",
            "io.github.electionpolicy:election-bom:" + version + ":import");
    List<String> direct = new ArrayList<>();
    NodeList children = snippet.getChildNodes();
    for (int i = 0; i < children.getLength(); i++) {
      if (children.item(i) instanceof Element list && list.getTagName().equals("dependencies")) {
        direct.addAll(dependencies(list));
      }
    }
    assertThat(direct).as("the snippet's dependencies: this module, its version from the BOM")
        .containsExactly("io.github.electionpolicy:election-josdk::");
  }

  @Test
  void theDocNamesTheJosdkReleaseTheModuleIsBuiltWith() throws IOException {
    String josdk = System.getProperty("josdk.expectedVersion");
    assumeTrue(josdk != null, "run outside Maven: no version declared");
    assertThat(String.join("\n", lines("docs/josdk.md")))
        .contains("`io.javaoperatorsdk:operator-framework-core` " + josdk)
        .contains("JOSDK " + josdk + " on fabric8 " + System.getProperty("fabric8.expectedVersion"));
  }

  @Test
  void theReadmeHasARowForTheModuleAndTheBomManagesIt() throws Exception {
    assertThat(lines("README.md")).anySatisfy(line -> assertThat(line)
        .startsWith("| `election-josdk` |").contains("docs/josdk.md"));
    Element bom = parse(lines("election-bom/pom.xml").stream()
        .filter(line -> !line.startsWith("<?xml")).collect(Collectors.toList()));
    NodeList artifacts = bom.getElementsByTagName("artifactId");
    List<String> managed = new ArrayList<>();
    for (int i = 0; i < artifacts.getLength(); i++) {
      managed.add(artifacts.item(i).getTextContent().strip());
    }
    assertThat(managed).contains("election-josdk");
  }
}
