package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The properties of {@link ShardCoordinatorProperties} can fail: each of {@link ShardCoordinator.Flaw}'s deliberate
 * defects, run in the same cluster of coordinators ({@link ShardCluster}) from fixed seeds, violates the property
 * named for it, while the real coordinator passes the same runs. {@code LEAVES_WITHOUT_LINGERING} is left to {@link
 * SimulationShardingLeaveByTwo}: this cluster's views show no leaving mark, so no leaver here names successors or stays.
 */
class ShardCoordinatorBrokenVariantsTest {

  private static final int SEEDS = 400;

  /** The property that catches a flaw: one list of the report. */
  static Function<ShardCluster.Report, List<String>> propertyCatching(ShardCoordinator.Flaw flaw) {
    switch (flaw) {
      case HANDS_OVER_BEFORE_SETTLE:
        return ShardCluster.Report::earlyHandOvers;
      case CONTENDS_BEFORE_STOPPED:
        return ShardCluster.Report::overlaps;
      case LEAVES_BEFORE_SHARDS_STOPPED:
        return ShardCluster.Report::earlyLeaves;
      case IGNORES_MEMBERSHIP_LOSS:
        return ShardCluster.Report::unfair;
      case TOKEN_KEPT_WHILE_HANDING_OVER:
        return ShardCluster.Report::wrongTokens;
      default:
        throw new AssertionError("no property named for " + flaw);
    }
  }

  private static Optional<String> firstViolation(ShardCoordinator.Flaw run, ShardCoordinator.Flaw named) {
    Function<ShardCluster.Report, List<String>> property = propertyCatching(named);
    for (long seed = 0; seed < SEEDS; seed++) {
      List<String> violations = property.apply(ShardCluster.run(seed, run));
      if (!violations.isEmpty()) {
        return Optional.of("seed " + seed + ": " + violations.get(0));
      }
    }
    return Optional.empty();
  }

  @ParameterizedTest
  @EnumSource(value = ShardCoordinator.Flaw.class, names = {"NONE", "LEAVES_WITHOUT_LINGERING"},
      mode = EnumSource.Mode.EXCLUDE)
  void everyDeliberateDefectIsCaught(ShardCoordinator.Flaw flaw) {
    assertThat(firstViolation(flaw, flaw)).as("a violation by %s", flaw).isPresent();
  }

  @ParameterizedTest
  @EnumSource(value = ShardCoordinator.Flaw.class, names = {"NONE", "LEAVES_WITHOUT_LINGERING"},
      mode = EnumSource.Mode.EXCLUDE)
  void theRealCoordinatorPassesTheSameRuns(ShardCoordinator.Flaw flaw) {
    assertThat(firstViolation(ShardCoordinator.Flaw.NONE, flaw)).isEmpty();
  }
}
