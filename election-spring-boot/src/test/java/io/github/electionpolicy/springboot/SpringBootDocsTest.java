package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.fabric8.LeaseSettings;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.boot.configurationmetadata.ConfigurationMetadataProperty;
import org.springframework.boot.configurationmetadata.ConfigurationMetadataRepositoryJsonBuilder;

/**
 * docs/spring-boot.md against what it describes: the dependency snippet, the example (character for
 * character), its configuration, the properties table (against the metadata the configuration processor
 * generated, which is what IDEs complete from), the failure report, and the README's and BOM's entries.
 */
class SpringBootDocsTest {

  private static final Path MODULE = Path.of(System.getProperty("basedir", "."));
  private static final Pattern ROW = Pattern.compile("^\\| `((?:management\\.health\\.)?election\\.[a-z.-]+)` \\| ([^|]+) \\|");

  private static String read(String path) throws IOException {
    return Files.readString(MODULE.resolve(path).normalize(), StandardCharsets.UTF_8);
  }

  /** The lines between two marker lines of the page, fences included. */
  private static String between(String start, String end) throws IOException {
    String page = Files.readString(Docs.PAGE, StandardCharsets.UTF_8);
    int from = page.indexOf(start + "\n");
    int to = page.indexOf(end);
    assertThat(from).as("marker %s", start).isNotNegative();
    assertThat(to).as("marker %s after %s", end, start).isGreaterThan(from);
    return page.substring(from + start.length() + 1, to);
  }

  private static Map<String, ConfigurationMetadataProperty> metadata() throws IOException {
    try (InputStream json = SpringBootDocsTest.class.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(json).as("the metadata the configuration processor generated").isNotNull();
      return ConfigurationMetadataRepositoryJsonBuilder.create(json).build().getAllProperties();
    }
  }

  private static Map<String, String> tableDefaults() {
    Map<String, String> rows = new LinkedHashMap<>();
    for (String line : Docs.lines()) {
      Matcher row = ROW.matcher(line);
      if (row.find()) {
        rows.put(row.group(1), row.group(2).trim());
      }
    }
    return rows;
  }

  @Test
  void theDependencySnippetNamesThisModule() throws IOException {
    String snippet = String.join("\n", Docs.blockAfter("# election-spring-boot"));
    String pom = read("pom.xml");
    assertThat(snippet).contains("<groupId>io.github.electionpolicy</groupId>")
        .contains("<artifactId>election-spring-boot</artifactId>").doesNotContain("<version>");
    assertThat(pom).contains("<artifactId>election-spring-boot</artifactId>");
    assertThat(read("../election-bom/pom.xml")).as("the BOM manages it")
        .contains("<artifactId>election-spring-boot</artifactId>");
    assertThat(read("../README.md")).as("the README's module table has a row for it")
        .containsPattern("(?m)^\\| `election-spring-boot` \\|");
  }

  @Test
  void theExampleOnThePageIsTheExampleTheBuildRuns() throws IOException {
    assertThat(between("<!-- spring-boot-example:start -->", "<!-- spring-boot-example:end -->"))
        .isEqualTo("```java\n"
            + read("src/test/java/io/github/electionpolicy/springboot/example/OrdersService.java") + "```\n");
    assertThat(Docs.blockAfter("<!-- orders-service.yml -->"))
        .isEqualTo(read("src/test/resources/orders-service.yml").lines().collect(Collectors.toList()));
  }

  @Test
  void theExamplesConfigurationHasTheProbeGroupsOfThePage() throws IOException {
    List<String> groups = Docs.blockAfter("<!-- probe groups -->");
    List<String> example = read("src/test/resources/orders-service.yml").lines().collect(Collectors.toList());
    assertThat(example).containsSequence(groups);
    assertThat(String.join("\n", groups)).contains("electionLiveness").contains("electionReadiness");
  }

  @Test
  void thePropertiesTableHasEveryPropertyAndItsDefault() throws IOException {
    Map<String, ConfigurationMetadataProperty> metadata = new LinkedHashMap<>(metadata());
    // election.* and the health indicator's switch; Actuator's management.endpoint.election.* have a table of
    // their own (ElectionEndpointDocsTest).
    metadata.keySet().removeIf(name -> !name.startsWith(ElectionProperties.PREFIX + ".")
        && !name.equals("management.health.election.enabled"));
    Map<String, String> table = tableDefaults();

    assertThat(table.keySet()).as("the table's properties are the metadata's")
        .containsExactlyInAnyOrderElementsOf(metadata.keySet());
    metadata.forEach((name, property) -> {
      String cell = table.get(name);
      if (property.getDefaultValue() == null) {
        assertThat(cell).as("%s has no default in the metadata", name).startsWith("none");
      } else {
        assertThat(cell).as("the default of %s", name)
            .isEqualTo("`" + property.getDefaultValue() + "`");
      }
    });
  }

  @Test
  void theTimingDefaultsOnThePageAreTheLibrarys() throws IOException {
    LeaseSettings defaults = LeaseSettings.builder().leaseName("a").build();
    Map<String, ConfigurationMetadataProperty> metadata = metadata();
    assertThat(metadata.get("election.lease-duration").getDefaultValue())
        .isEqualTo(defaults.leaseDuration().toSeconds() + "s");
    assertThat(metadata.get("election.renew-deadline").getDefaultValue())
        .isEqualTo(defaults.renewDeadline().toSeconds() + "s");
    assertThat(metadata.get("election.retry-period").getDefaultValue())
        .isEqualTo(defaults.retryPeriod().toSeconds() + "s");
    assertThat(metadata.get("election.phase").getDefaultValue()).isEqualTo(ElectionLifecycle.DEFAULT_PHASE);
  }

  @Test
  void everyPropertyHasADescriptionForIdes() throws IOException {
    metadata().forEach((name, property) -> assertThat(property.getDescription()).as(name)
        .isNotBlank().doesNotContain("{@"));
  }

  @Test
  void theFailureReportOnThePageIsTheAnalyzers() {
    InvalidElectionSettingException failure = (InvalidElectionSettingException) catchThrowable(
        () -> LeaseSettings.builder().leaseName("a").renewDeadline(Duration.ofSeconds(15)).build());
    List<String> report = Docs.blockAfter("failure report names the property to change");

    assertThat(report).contains(failure.getMessage(), ElectionSettingFailureAnalyzer.action("renewDeadline"));
  }
}
