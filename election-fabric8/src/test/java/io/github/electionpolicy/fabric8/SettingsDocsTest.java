package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The defaults that the settings tables in the docs state are the ones {@link LeaseSettings} applies. */
class SettingsDocsTest {

  private static final LeaseSettings DEFAULTS =
      LeaseSettings.builder().leaseName("orders-controller").identity("a").build();

  /** The timing defaults, which both tables write as whole seconds. */
  private static final Map<String, Duration> DEFAULT_DURATIONS = Map.of(
      "leaseDuration", DEFAULTS.leaseDuration(),
      "renewDeadline", DEFAULTS.renewDeadline(),
      "retryPeriod", DEFAULTS.retryPeriod());

  private static String read(String path) throws IOException {
    return Files.readString(Path.of(System.getProperty("basedir", ".")).resolve(path).normalize(),
        StandardCharsets.UTF_8);
  }

  private static String defaultCell(String doc, String setting) {
    Matcher row = Pattern.compile("(?m)^\\| `" + setting + "` \\| ([^|]+) \\|").matcher(doc);
    assertThat(row.find()).as("a row for %s", setting).isTrue();
    return row.group(1).trim();
  }

  @ParameterizedTest
  @ValueSource(strings = {"../docs/configuration.md", "../docs/fabric8.md"})
  void documentedTimingDefaultsAreTheBuildersDefaults(String path) throws IOException {
    String doc = read(path);

    DEFAULT_DURATIONS.forEach((setting, value) ->
        assertThat(defaultCell(doc, setting)).as(setting).startsWith(value.toSeconds() + " s"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"../docs/configuration.md", "../docs/fabric8.md"})
  void documentedDerivedDefaultsAreTheBuildersDefaults(String path) throws IOException {
    String doc = read(path);

    assertThat(DEFAULTS.requestTimeout()).isEqualTo(DEFAULTS.renewDeadline().dividedBy(2));
    assertThat(defaultCell(doc, "requestTimeout").replace("`", "")).startsWith("renewDeadline / 2");
    assertThat(DEFAULTS.healthBudget()).isEqualTo(DEFAULTS.leaseDuration().plus(DEFAULTS.renewDeadline()));
    assertThat(defaultCell(doc, "healthBudget").replace("`", "")).startsWith("leaseDuration + renewDeadline");
    assertThat(DEFAULTS.stopTimeout()).isEqualTo(DEFAULTS.leaseDuration().minus(DEFAULTS.renewDeadline()));
    assertThat(defaultCell(doc, "stopTimeout").replace("`", "")).startsWith("leaseDuration − renewDeadline");
    assertThat(DEFAULTS.lossPolicy()).isEqualTo(LossPolicy.exit());
    assertThat(defaultCell(doc, "lossPolicy")).isEqualTo("`LossPolicy.exit()`");
  }
}
