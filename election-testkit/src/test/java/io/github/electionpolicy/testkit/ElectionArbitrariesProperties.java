package io.github.electionpolicy.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.KillSwitch;
import io.github.electionpolicy.ProcessHost;
import io.github.electionpolicy.Substrate;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.statistics.StatisticsReport;

/**
 * The generators spell what they promise, judged without the library, and cover every spelling they
 * promise (the coverage checks fail the property when a kind of spelling never shows up). The statistics
 * only feed the coverage checks, so their reports are off.
 */
class ElectionArbitrariesProperties {

  private static final Set<String> ON_WORDS = Set.of("true", "1", "yes", "on");
  private static final Set<String> OFF_WORDS = Set.of("false", "0", "no", "off");

  @Property
  @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
  void electionOnIsSpelledUnsetEmptyBlankOrAsAnOnWordInAnyCaseWithBlanks(
      @ForAll("electionOnValues") Optional<String> value) {
    String shape = shape(value);
    assertThat(shape).isIn("unset", "empty", "blank", "true", "1", "yes", "on");

    Statistics.label("shape").collect(shape).coverage(coverage -> {
      for (String expected : new String[] {"unset", "empty", "blank", "true", "1", "yes", "on"}) {
        coverage.check(expected).count((Integer n) -> n > 0);
      }
    });
    Statistics.label("padded").collect(value.map(v -> !v.isBlank() && !v.equals(v.trim())).orElse(false))
        .coverage(coverage -> coverage.check(true).count((Integer n) -> n > 0));
  }

  @Property
  @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
  void electionOffIsSpelledAsAnOffWordInAnyCaseWithBlanks(@ForAll("electionOffValues") Optional<String> value) {
    assertThat(value).isPresent();
    String word = value.get().trim();
    assertThat(OFF_WORDS).contains(word.toLowerCase(Locale.ROOT));

    Statistics.label("word").collect(word.toLowerCase(Locale.ROOT)).coverage(coverage -> {
      for (String expected : OFF_WORDS) {
        coverage.check(expected).count((Integer n) -> n > 0);
      }
    });
    Statistics.label("mixed case").collect(!word.equals(word.toLowerCase(Locale.ROOT)))
        .coverage(coverage -> coverage.check(true).count((Integer n) -> n > 0));
  }

  @Property
  @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
  void podVariablesAreBothUsable(@ForAll("podVariables") Map<String, String> variables) {
    assertThat(state(variables, ProcessHost.SERVICE_HOST_VARIABLE)).isEqualTo("usable");
    assertThat(state(variables, ProcessHost.SERVICE_PORT_VARIABLE)).isEqualTo("usable");
    String host = variables.get(ProcessHost.SERVICE_HOST_VARIABLE);

    Statistics.label("host").collect(host.contains(":") ? "IPv6" : host.matches("[0-9.]+") ? "IPv4" : "DNS")
        .coverage(coverage -> {
          coverage.check("IPv4").count((Integer n) -> n > 0);
          coverage.check("IPv6").count((Integer n) -> n > 0);
        });
  }

  @Property
  @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
  void outsidePodVariablesAreNeverBothUsableAndCoverEveryHalfSetShape(
      @ForAll("outsidePodVariables") Map<String, String> variables) {
    String host = state(variables, ProcessHost.SERVICE_HOST_VARIABLE);
    String port = state(variables, ProcessHost.SERVICE_PORT_VARIABLE);
    assertThat(host.equals("usable") && port.equals("usable")).as("both usable in %s", variables).isFalse();

    Statistics.label("host").collect(host).coverage(coverage -> {
      for (String expected : new String[] {"absent", "empty", "blank", "usable"}) {
        coverage.check(expected).count((Integer n) -> n > 0);
      }
    });
    Statistics.label("port").collect(port).coverage(coverage -> {
      for (String expected : new String[] {"absent", "empty", "blank", "usable"}) {
        coverage.check(expected).count((Integer n) -> n > 0);
      }
    });
  }

  @Property
  @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
  void invalidKillSwitchValuesAreNeitherBlankNorAccepted(@ForAll("invalidValues") String value) {
    assertThat(value).isNotBlank();
    assertThat(ON_WORDS).doesNotContain(value.trim().toLowerCase(Locale.ROOT));
    assertThat(OFF_WORDS).doesNotContain(value.trim().toLowerCase(Locale.ROOT));
    assertThat(value).doesNotContain("\"", "\\");
  }

  @Property
  @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
  void scenariosUseTheDefaultAndCustomKillSwitchVariablesAndAddNoise(@ForAll Scenario scenario) {
    assertThat(scenario.substrate().usesKubernetesApi()).isEqualTo(scenario.row().substrateUsesKubernetesApi());

    Statistics.label("kill switch variable")
        .collect(scenario.killSwitchVariable().equals(ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE) ? "default" : "custom")
        .coverage(coverage -> {
          coverage.check("default").count((Integer n) -> n > 0);
          coverage.check("custom").count((Integer n) -> n > 0);
        });
    long read = scenario.variables().keySet().stream()
        .filter(name -> name.equals(scenario.killSwitchVariable())
            || name.equals(ProcessHost.SERVICE_HOST_VARIABLE) || name.equals(ProcessHost.SERVICE_PORT_VARIABLE))
        .count();
    Statistics.label("noise").collect(scenario.variables().size() > read)
        .coverage(coverage -> coverage.check(true).count((Integer n) -> n > 0));
    Statistics.label("row").collect(scenario.row().number()).coverage(coverage -> {
      for (TruthTable.Row row : TruthTable.rows()) {
        coverage.check(row.number()).count((Integer n) -> n > 0);
      }
    });
  }

  @Property
  @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
  void substratesHaveNonBlankNamesAndBothCapabilities(@ForAll Substrate substrate) {
    assertThat(substrate.name()).isNotBlank().doesNotContain("\"", "\\");

    Statistics.label("uses the Kubernetes API").collect(substrate.usesKubernetesApi()).coverage(coverage -> {
      coverage.check(true).count((Integer n) -> n > 0);
      coverage.check(false).count((Integer n) -> n > 0);
    });
  }

  @Provide
  Arbitrary<Optional<String>> electionOnValues() {
    return ElectionArbitraries.killSwitchValues(KillSwitch.State.ELECTION_ON);
  }

  @Provide
  Arbitrary<Optional<String>> electionOffValues() {
    return ElectionArbitraries.killSwitchValues(KillSwitch.State.ELECTION_OFF);
  }

  @Provide
  Arbitrary<Map<String, String>> podVariables() {
    return ElectionArbitraries.processHostVariables(ProcessHost.Kind.KUBERNETES_POD);
  }

  @Provide
  Arbitrary<Map<String, String>> outsidePodVariables() {
    return ElectionArbitraries.processHostVariables(ProcessHost.Kind.OUTSIDE_POD);
  }

  @Provide
  Arbitrary<String> invalidValues() {
    return ElectionArbitraries.invalidKillSwitchValues();
  }

  private static String shape(Optional<String> value) {
    if (value.isEmpty()) {
      return "unset";
    }
    if (value.get().isEmpty()) {
      return "empty";
    }
    return value.get().isBlank() ? "blank" : value.get().trim().toLowerCase(Locale.ROOT);
  }

  private static String state(Map<String, String> variables, String name) {
    String value = variables.get(name);
    if (value == null) {
      return "absent";
    }
    if (value.isEmpty()) {
      return "empty";
    }
    return value.isBlank() ? "blank" : "usable";
  }
}
