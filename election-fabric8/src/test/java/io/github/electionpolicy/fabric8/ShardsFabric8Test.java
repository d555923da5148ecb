package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.dsl.base.ShardField;
import io.fabric8.kubernetes.client.dsl.base.ShardRange;
import io.fabric8.kubernetes.client.dsl.base.ShardSelector;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Shards} writes the same ranges as fabric8 8's own {@code ShardRange.ofShard(i, n)} and
 * {@code ShardSelector.ofShard(i, n)}, so a user can pass either to {@code withShardSelector}. fabric8 7 has no shard
 * API: election-fabric8-compat7 leaves this file out of its compilation (see its pom).
 */
class ShardsFabric8Test {

  static IntStream counts() {
    return IntStream.concat(IntStream.rangeClosed(1, 130), IntStream.of(255, 256, 1000, 1023, 4095, Shards.MAX_COUNT));
  }

  @ParameterizedTest
  @MethodSource("counts")
  void everyShardIsFabric8sShardOfTheSameCount(int count) {
    Shards shards = Shards.of(count);
    for (int shard = 0; shard < count; shard++) {
      Shards.Range range = shards.range(shard);
      ShardRange uid = ShardRange.ofShard(shard, count);
      assertThat(range.selector(Shards.UID_FIELD)).isEqualTo(uid.toExpression())
          .isEqualTo(ShardSelector.ofShard(shard, count).toExpression());
      assertThat(range.selector(Shards.NAMESPACE_FIELD))
          .isEqualTo(ShardRange.ofShard(ShardField.NAMESPACE, shard, count).toExpression());
      assertThat(ShardsProperties.unsigned(range.start())).isEqualTo(uid.getStart());
      assertThat(range.end()).isEqualTo(uid.getEnd());
    }
  }

  @Test
  void severalShardsThatDoNotTouchAreFabric8sSelectorOfTheirShards() {
    assertThat(Shards.of(8).selector(List.of(5, 1, 3), Shards.UID_FIELD))
        .isEqualTo(ShardSelector.builder().addShard(1, 8).addShard(3, 8).addShard(5, 8).build().toExpression());
    assertThat(Shards.of(3).selector(List.of(0, 2), Shards.NAMESPACE_FIELD))
        .isEqualTo(ShardSelector.builder().addShard(ShardField.NAMESPACE, 0, 3).addShard(ShardField.NAMESPACE, 2, 3)
            .build().toExpression());
  }

  @Test
  void theFieldPathsAreFabric8s() {
    assertThat(Shards.UID_FIELD).isEqualTo(ShardField.UID.getPath());
    assertThat(Shards.NAMESPACE_FIELD).isEqualTo(ShardField.NAMESPACE.getPath());
  }
}
