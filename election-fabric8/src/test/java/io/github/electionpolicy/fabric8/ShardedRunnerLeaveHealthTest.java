package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The health of a replica that gave up its shards because a shard's stop() failed, while it still releases its
 * membership Lease: docs/sharding.md and {@link ShardedRunner#health()} promise it is "not live ... after the replica
 * gave up its shards because one did". Adversarial review h-attack27.
 */
class ShardedRunnerLeaveHealthTest {

  private final ShardedRunnerFaultsTest.Faults faults = new ShardedRunnerFaultsTest.Faults();

  @RegisterExtension
  final MockApi api = new MockApi(faults::around);

  private final CountDownLatch letGo = new CountDownLatch(1);
  private ShardedRunner a;

  @AfterEach
  void closeAll() {
    letGo.countDown();
    faults.clear();
    if (a != null) {
      a.close();
    }
  }

  /**
   * A shard's stop() throws after its Lease was taken by someone else: the replica gives up every shard and leaves
   * (SHARD_ABANDONED). Its membership Lease's release is held at the server: the coordinator is then Releasing, every
   * shard runner stopped, so neither the hung-shard flag nor the Leaving/Stopped check covered it, and health()
   * said live while the replica had already given up for good.
   */
  @Test
  void aReplicaThatGaveUpItsShardsIsNotLiveWhileItReleasesItsMembership() throws InterruptedException {
    AtomicBoolean threw = new AtomicBoolean();
    CountDownLatch releaseArrived = new CountDownLatch(1);
    faults.add(request -> {
      if (threw.get() && "PUT".equals(request.getMethod())
          && ShardedRunnerFaultsTest.path(request).endsWith(ShardedRunnerFaultsTest.memberLease("pod-a"))
          && !new String(request.getBody().getBytes(), StandardCharsets.UTF_8)
              .contains("\"holderIdentity\":\"pod-a\"")) {
        releaseArrived.countDown();
        try {
          letGo.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return null;
    });
    a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").build())
        .shards(1)
        .service(ShardService.of((shard, term) -> { }, shard -> {
          threw.set(true);
          throw new IllegalStateException("shard " + shard + "'s stop failed");
        }))
        .start();
    Await.until("pod-a owns its shard", () -> a.ownedShards().size() == 1, Duration.ofSeconds(15), a::toString);
    assertThat(a.health().live()).isTrue();

    api.fixture.overwriteHolder(ShardedRunnerFaultsTest.shardLease(0), "thief");

    assertThat(releaseArrived.await(15, TimeUnit.SECONDS)).as("pod-a releases its membership: " + a).isTrue();
    ElectionHealth health = a.health();
    letGo.countDown();
    assertThat(health.live()).as("health while releasing, after giving up its shards: " + health).isFalse();
    assertThat(a.awaitStopped(Duration.ofSeconds(15))).isTrue();
    assertThat(a.failure()).isPresent();
    assertThat(a.health().live()).isFalse();
  }
}
