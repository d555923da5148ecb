package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.configurationmetadata.ConfigurationMetadataProperty;
import org.springframework.boot.configurationmetadata.ConfigurationMetadataRepositoryJsonBuilder;

/**
 * The endpoint's section of docs/spring-boot.md against the metadata the configuration processor generated for
 * {@link ElectionEndpoint} (Actuator's {@code management.endpoint.election.*}, which IDEs complete), and the
 * exposure it shows against the endpoint's id. Its JSON example is checked against a real answer by
 * ElectionEndpointOverHttpTest.
 */
class ElectionEndpointDocsTest {

  private static final String PREFIX = "management.endpoint." + ElectionEndpoint.ID + ".";
  private static final Pattern ROW = Pattern.compile("^\\| `(management\\.endpoint\\.election\\.[a-z.-]+)` \\| ([^|]+) \\|");

  @Test
  void thePageHasEveryPropertyOfTheEndpointWithItsDefault() throws IOException {
    Map<String, String> defaults = new LinkedHashMap<>();
    try (InputStream json = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(json).as("the metadata the configuration processor generated").isNotNull();
      Map<String, ConfigurationMetadataProperty> all = ConfigurationMetadataRepositoryJsonBuilder.create(json)
          .build().getAllProperties();
      all.forEach((name, property) -> {
        if (name.startsWith(PREFIX)) {
          defaults.put(name, "`" + property.getDefaultValue() + "`");
        }
      });
    }
    Map<String, String> table = new LinkedHashMap<>();
    for (String line : Docs.lines()) {
      Matcher row = ROW.matcher(line);
      if (row.find()) {
        table.put(row.group(1), row.group(2).trim());
      }
    }

    assertThat(defaults).as("the endpoint's metadata").isNotEmpty();
    assertThat(table).as("the page's rows for %s*", PREFIX).isEqualTo(defaults);
  }

  @Test
  void theExposureOnThePageNamesTheEndpointsId() {
    assertThat(Docs.blockAfter("<!-- election endpoint exposure -->"))
        .containsExactly("management.endpoints.web.exposure.include=health," + ElectionEndpoint.ID);
  }
}
