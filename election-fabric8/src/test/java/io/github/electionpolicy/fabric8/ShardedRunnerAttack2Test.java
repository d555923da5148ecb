package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Findings of a second adversarial review of the sharded runner (h-attack11). Each test shows a promise of the
 * sharded runner's Javadoc or docs/sharding.md that the runner broke before the fix that came with the test.
 */
class ShardedRunnerAttack2Test {

  /**
   * ShardListener promises a call after each change of the owned shards "with the set as ownedShards() then showed
   * it", and {@code stopped} once after the replica stopped. Running unelected, the replica owns every shard at once
   * (ownedShards() shows them all), but ShardAssembly's unelected path never handed the builder's listeners to
   * anything: a metrics gauge or a log built on a ShardListener saw nothing, neither the shards nor the stop, on a
   * developer's machine or with election off.
   */
  @Test
  void runningUnelectedTellsTheListenersOfTheShardsAndTheStop() {
    List<SortedMap<Integer, LeadershipTerm>> told = new CopyOnWriteArrayList<>();
    List<Optional<Throwable>> stops = new CopyOnWriteArrayList<>();
    ShardedRunner runner = ShardedRunner.builder()
        .decision(MockApi.RUN_UNELECTED)
        .shards(4)
        .service(ShardService.of((shard, term) -> { }, shard -> { }))
        .listener(new ShardListener() {
          @Override
          public void ownedShardsChanged(SortedMap<Integer, LeadershipTerm> owned) {
            told.add(owned);
          }

          @Override
          public void stopped(Optional<Throwable> failure) {
            stops.add(failure);
          }
        })
        .start();
    try {
      assertThat(runner.ownedShards()).hasSize(4);
      Await.until("the listener told of the 4 shards", () -> !told.isEmpty() && told.get(told.size() - 1).size() == 4,
          told::toString);
      assertThat(told.get(told.size() - 1)).isEqualTo(runner.ownedShards());
    } finally {
      runner.close();
    }
    Await.until("the listener told of the stop", () -> !stops.isEmpty(), stops::toString);
    assertThat(stops).containsExactly(Optional.empty());
    assertThat(told.get(told.size() - 1)).as("the last set told").isEmpty();
  }
}
