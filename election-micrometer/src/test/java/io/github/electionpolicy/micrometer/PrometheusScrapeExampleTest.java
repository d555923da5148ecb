package io.github.electionpolicy.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The runnable example runs in every build: one replica's scrape shows it leading, the other's following. */
class PrometheusScrapeExampleTest {

  private static final String TAGS_PATTERN = "\\{name=\"orders-controller\",namespace=\"[a-z0-9-]+\"\\}";

  @Test
  void theExamplePrintsTheScrapeOfALeaderAndOfAFollower() throws Exception {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();

    Map<String, String> scrapes = PrometheusScrapeExample.run(new PrintStream(printed, true, StandardCharsets.UTF_8));

    assertThat(scrapes).containsOnlyKeys("orders-1", "orders-2");
    assertThat(scrapes.values()).filteredOn(scrape -> matches(scrape, "leader_election_master_status" + TAGS_PATTERN
        + " 1.0")).as("exactly one leader").hasSize(1);
    assertThat(scrapes.values()).filteredOn(scrape -> matches(scrape, "leader_election_master_status" + TAGS_PATTERN
        + " 0.0")).as("exactly one follower").hasSize(1);
    String output = printed.toString(StandardCharsets.UTF_8);
    assertThat(output).contains("# ---- scrape of orders-1 ----", "# ---- scrape of orders-2 ----");
    scrapes.values().forEach(scrape -> assertThat(output).contains(scrape));
  }

  private static boolean matches(String scrape, String line) {
    return Pattern.compile("(?m)^" + line + "$").matcher(scrape).find();
  }
}
