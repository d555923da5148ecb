package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/sharding.md says what a leaving replica does with its shards as the code does it (review h-leave: once a leaver
 * named its successors and stayed for the earlier leavers, the page still said that a leaver releases its shards and
 * that naming on a leave was "not built yet").
 */
class ShardingLeaveDocTest {

  private static String page() throws Exception {
    return Files.readString(Path.of(System.getProperty("basedir", ".")).resolve("../docs/sharding.md").normalize());
  }

  @Test
  void theShardingPageSaysALeaverNamesItsSuccessorsAndStays() throws Exception {
    String page = page();
    assertThat(page).doesNotContain("releases its shards as their work stops (not by name")
        .doesNotContain("a replica that leaves releases its shards rather than naming")
        .doesNotContain("needs a leaver to stay, declining, until no hand-over to it can still be on its way: not built");
    assertThat(page).contains("A leaver names its successors only from a view that shows its own leaving mark")
        .contains("`ShardCoordinator.lingers`").contains("`SimulationShardingLeaveNamedFromARelist`");
  }
}
