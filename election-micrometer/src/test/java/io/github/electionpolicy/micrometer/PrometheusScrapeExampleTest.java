package io.github.electionpolicy.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.ElectionDecision;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The runnable example runs once for this class, as {@code exec:java} runs it; its output is then checked, and
 * so is everything docs/metrics.md says about the scrape: the sample scrape, the metric table and the alerts.
 */
class PrometheusScrapeExampleTest {

  private static final String TAGS_PATTERN = "\\{name=\"orders-controller\",namespace=\"[a-z0-9-]+\"\\}";
  private static final Pattern ROW = Pattern.compile("(?m)^\\| `([a-z_]+)` \\| ([^|]+) \\| ([^|]+) \\|");
  private static final Pattern METRIC = Pattern.compile("leader_election_[a-z_]+");
  private static final Pattern GROUPING = Pattern.compile("\\b(?:by|on|without|ignoring) \\(([^)]*)\\)");
  private static final Pattern SELECTOR = Pattern.compile("(leader_election_[a-z_]+)\\{([^}]*)\\}");
  private static final Pattern MATCHER = Pattern.compile("([a-z_]+)\\s*(?:=|!=|=~|!~)\\s*\"([^\"]*)\"");

  private static String printed;
  private static Map<String, String> scrapes;
  private static String leaderScrape;

  @BeforeAll
  static void runTheExample() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    scrapes = PrometheusScrapeExample.run(new PrintStream(out, true, StandardCharsets.UTF_8));
    printed = out.toString(StandardCharsets.UTF_8);
    leaderScrape = scrapes.values().stream()
        .filter(scrape -> matches(scrape, "leader_election_master_status" + TAGS_PATTERN + " 1.0"))
        .findFirst().orElse("");
  }

  @Test
  void theExamplePrintsTheScrapeOfALeaderAndOfAFollower() {
    assertThat(scrapes).containsOnlyKeys("orders-1", "orders-2");
    assertThat(scrapes.values()).filteredOn(scrape -> matches(scrape, "leader_election_master_status" + TAGS_PATTERN
        + " 1.0")).as("exactly one leader").hasSize(1);
    assertThat(scrapes.values()).filteredOn(scrape -> matches(scrape, "leader_election_master_status" + TAGS_PATTERN
        + " 0.0")).as("exactly one follower").hasSize(1);
    assertThat(printed).contains("# ---- scrape of orders-1 ----", "# ---- scrape of orders-2 ----");
    scrapes.values().forEach(scrape -> assertThat(printed).contains(scrape));
  }

  @Test
  void theDocsSampleScrapeIsTheLeadersUpToItsValues() throws Exception {
    List<String> documented = MetricsDocsTest.markedBlock(MetricsDocsTest.doc(), "metrics-scrape", "text").lines()
        .collect(Collectors.toList());
    List<String> real = leaderScrape.lines().collect(Collectors.toList());

    assertThat(documented.stream().map(Scrape::shape).collect(Collectors.toList()))
        .as("docs/metrics.md's sample scrape, values aside; replace it with the leader's scrape printed by the "
            + "example:%n%s", leaderScrape)
        .isEqualTo(real.stream().map(Scrape::shape).collect(Collectors.toList()));
  }

  @Test
  void theDocsTableListsEveryFamilyWithItsTypeAndLabels() throws Exception {
    Scrape scrape = new Scrape(leaderScrape);
    Matcher row = ROW.matcher(MetricsDocsTest.doc());
    Set<String> documented = new HashSet<>();
    while (row.find()) {
      String family = row.group(1);
      documented.add(family);
      assertThat(scrape.types).as("a family named %s", family).containsKey(family);
      assertThat(row.group(2)).as("the type of %s", family).startsWith(scrape.types.get(family));
      String sample = scrape.types.get(family).equals("summary") ? family + "_count" : family;
      assertThat(labelsIn(row.group(3))).as("the labels of %s", family)
          .isEqualTo(scrape.samples.get(sample).keySet());
    }

    assertThat(documented).as("every family of the scrape has a row").isEqualTo(scrape.types.keySet());
  }

  @Test
  void theDocsAlertsNameOnlyExportedSeriesLabelsAndValues() throws Exception {
    Scrape scrape = new Scrape(leaderScrape);
    Set<String> outcomes = names(ElectionDecision.Outcome.values());
    Set<String> reasons = names(ElectionDecision.Reason.values());
    List<String> expressions = MetricsDocsTest.markedBlock(MetricsDocsTest.doc(), "metrics-alerts", "yaml").lines()
        .map(String::strip).filter(line -> line.startsWith("expr: ")).map(line -> line.substring(6))
        .collect(Collectors.toList());
    assertThat(expressions).hasSizeGreaterThanOrEqualTo(2);

    for (String expression : expressions) {
      assertThat(balanced(expression)).as("balanced brackets in %s", expression).isTrue();
      Set<String> labels = new HashSet<>();
      Matcher metric = METRIC.matcher(expression);
      while (metric.find()) {
        assertThat(scrape.samples).as("a series named %s in %s", metric.group(), expression)
            .containsKey(metric.group());
        labels.addAll(scrape.samples.get(metric.group()).keySet());
      }
      Matcher grouping = GROUPING.matcher(expression);
      while (grouping.find()) {
        assertThat(labelsIn(grouping.group(1))).as("labels of %s", expression).isSubsetOf(labels);
      }
      Matcher selector = SELECTOR.matcher(expression);
      while (selector.find()) {
        Matcher matcher = MATCHER.matcher(selector.group(2));
        while (matcher.find()) {
          assertThat(scrape.samples.get(selector.group(1))).as("a label %s on %s", matcher.group(1), selector.group(1))
              .containsKey(matcher.group(1));
          if (matcher.group(1).equals(ElectionMetrics.TAG_OUTCOME)) {
            assertThat(outcomes).contains(matcher.group(2));
          } else if (matcher.group(1).equals(ElectionMetrics.TAG_REASONS)) {
            assertThat(reasons).containsAll(Arrays.asList(matcher.group(2).split(",")));
          }
        }
      }
    }
  }

  private static Set<String> labelsIn(String text) {
    return Arrays.stream(text.replace("`", "").split(",")).map(String::strip).filter(s -> !s.isEmpty())
        .collect(Collectors.toSet());
  }

  private static Set<String> names(Enum<?>[] values) {
    return Arrays.stream(values).map(Enum::name).collect(Collectors.toSet());
  }

  private static boolean balanced(String expression) {
    int depth = 0;
    for (char c : expression.toCharArray()) {
      depth += c == '(' || c == '{' || c == '[' ? 1 : c == ')' || c == '}' || c == ']' ? -1 : 0;
      if (depth < 0) {
        return false;
      }
    }
    return depth == 0;
  }

  private static boolean matches(String scrape, String line) {
    return Pattern.compile("(?m)^" + line + "$").matcher(scrape).find();
  }
}
