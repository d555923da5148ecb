package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A shard's Lease deleted by hand ({@code kubectl delete lease}) while a replica owns the shard: the holder's term
 * lasts until its renew deadline (it hears of the deletion only when its next renewal fails), so the other replicas
 * must not count the shard free at the deletion, only once the holder's lease duration has passed, as a single
 * election's follower waits for a deleted Lease's last holder (LeaseDeletionTest).
 */
class ShardLeaseDeletedByHandTest {

  @RegisterExtension
  final MockApi api = new MockApi();

  private final List<ShardedRunner> runners = new ArrayList<>();
  private final Map<Integer, String> running = new ConcurrentHashMap<>();
  private final List<String> overlaps = new CopyOnWriteArrayList<>();
  private final Map<Integer, Long> stoppedAt = new ConcurrentHashMap<>();
  private final Map<Integer, Long> startedAt = new ConcurrentHashMap<>();
  // Counted down by every start once armed: the start of another replica's, seen from the slow stop.
  private volatile CountDownLatch started = new CountDownLatch(0);
  private volatile String slowStop;

  @AfterEach
  void closeAll() {
    runners.forEach(ShardedRunner::close);
  }

  private ShardedRunner replica(String identity) {
    ShardedRunner runner = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings(identity).build())
        .shards(1)
        .service(new ShardService() {
          @Override
          public void start(int shard, LeadershipTerm term) {
            String before = running.putIfAbsent(shard, identity);
            if (before != null) {
              overlaps.add("shard " + shard + " started in " + identity + " while running in " + before);
            }
            startedAt.put(shard, System.nanoTime());
            started.countDown();
          }

          @Override
          public void stop(int shard) throws InterruptedException {
            if (identity.equals(slowStop)) {
              // A stop that drains its work for up to a second (within the stop timeout of 2 s); it ends at once if
              // another replica starts the shard meanwhile, which is the overlap this test looks for.
              if (started.await(1, TimeUnit.SECONDS)) {
                overlaps.add("shard " + shard + " started elsewhere while " + identity + "'s stop ran");
              }
            }
            stoppedAt.put(shard, System.nanoTime());
            running.remove(shard, identity);
          }
        })
        .start();
    runners.add(runner);
    return runner;
  }

  /**
   * pod-z owns the one shard; pod-a (the smaller identity, so the shard's quota goes to it once nobody holds the
   * shard) has joined. The shard's Lease is deleted by hand: pod-a must not start the shard's work while pod-z's
   * runs; pod-z stops it once its renewal fails, and only then may pod-a take the shard.
   */
  @Test
  void aShardLeaseDeletedByHandIsNotTakenWhileItsHolderStillRunsTheShard() {
    ShardedRunner z = replica("pod-z");
    Await.until("pod-z owns shard 0", () -> z.ownedShards().containsKey(0) && running.containsKey(0),
        Duration.ofSeconds(10), z::toString);
    ShardedRunner a = replica("pod-a");
    Await.until("pod-a is a member", () -> api.fixture.lease(MockApi.LEASE + "-member-pod-a")
        .map(lease -> "pod-a".equals(lease.getSpec().getHolderIdentity())).orElse(false)
        && a.health().ready(), Duration.ofSeconds(10), a::toString);

    started = new CountDownLatch(1);
    slowStop = "pod-z";
    api.client().leases().inNamespace(MockApi.NAMESPACE).withName(MockApi.LEASE + "-shard-0").delete();

    Await.until("someone runs shard 0 again after pod-z stopped it (or an overlap)", () -> !overlaps.isEmpty()
        || stoppedAt.containsKey(0) && running.containsKey(0) && startedAt.get(0) - stoppedAt.get(0) > 0,
        Duration.ofSeconds(15),
        () -> z + " " + a + " running " + running + " overlaps " + overlaps);
    assertThat(overlaps).as("shard 0's work never runs in two replicas at once").isEmpty();
  }
}
