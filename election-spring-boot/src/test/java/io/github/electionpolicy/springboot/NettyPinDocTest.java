package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Netty pin that docs/spring-boot.md shows for a build that imports Spring Boot's BOM is the one this module's
 * own build uses (which runs the fixture on Spring Boot 4.0.7): the same imports, in the same order.
 */
class NettyPinDocTest {

  private static final Pattern IMPORT = Pattern.compile("<dependency>\\s*<groupId>([^<]+)</groupId>\\s*"
      + "<artifactId>([^<]+)</artifactId>\\s*<version>([^<]+)</version>\\s*<type>pom</type>\\s*"
      + "<scope>import</scope>\\s*</dependency>");

  private static List<String> imports(String xml) {
    List<String> found = new ArrayList<>();
    Matcher matcher = IMPORT.matcher(xml);
    while (matcher.find()) {
      found.add(matcher.group(1) + ":" + matcher.group(2) + ":" + matcher.group(3));
    }
    return found;
  }

  @Test
  void thePageImportsNettyBeforeSpringBootsBomAsThisModuleDoes() throws IOException {
    String block = String.join("\n", Docs.blockAfter("<!-- netty-pin"));
    // election-spring-boot's pom, also when election-spring-boot-compat3 runs these tests on Spring Boot 3.5.
    Path pomFile = Path.of(System.getProperty("basedir", ".")).resolve("../election-spring-boot/pom.xml").normalize();
    String pom = Files.readString(pomFile, StandardCharsets.UTF_8);
    Matcher bootVersion = Pattern.compile("<spring-boot.version>([^<]+)</spring-boot.version>").matcher(pom);
    assertThat(bootVersion.find()).isTrue();
    String management = pom.substring(pom.indexOf("<dependencyManagement>"), pom.indexOf("</dependencyManagement>"))
        .replace("${spring-boot.version}", bootVersion.group(1));

    assertThat(imports(block)).as("the page's imports").hasSize(2)
        .containsExactlyElementsOf(imports(management));
    assertThat(imports(block).get(0)).startsWith("io.netty:netty-bom:");
  }
}
