package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sharded runner against a real kube-apiserver 1.20 and etcd: 3 replicas and 16 shards, each replica a client of
 * its own behind a TCP proxy. Every shard is owned once and fairly; a closed replica's shards move at once (released,
 * then taken, well before they would have expired); a killed one's (its connections refused) only after their Leases
 * expired; an added replica gets its share, handed over by name. Checked twice: by a ledger of where each
 * shard's work runs (a start of a shard whose work runs elsewhere is an overlap) and from the server's own record of
 * every shard Lease's writes (a new holder got a shard only from an empty holder, by a hand-over naming it, or at or
 * after the previous holder's Lease expired).
 */
class ShardedRunnerIT {

  private static final int SHARDS = 16;
  private static final ShardLeases LEASES = new ShardLeases(MockApi.LEASE, SHARDS);

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final Map<Integer, String> running = new ConcurrentHashMap<>();
  private final List<String> overlaps = new CopyOnWriteArrayList<>();
  private final Map<String, ShardedRunner> runners = new ConcurrentHashMap<>();
  private final Map<String, ReplicaLink> links = new ConcurrentHashMap<>();

  @AfterEach
  void closeAll() {
    runners.values().forEach(ShardedRunner::close);
  }

  private ShardedRunner replica(String identity) {
    ReplicaLink link = api.replica(identity);
    links.put(identity, link);
    ShardedRunner runner = ShardedRunner.builder()
        .client(link.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings(identity).namespace(api.namespace()).build())
        .shards(SHARDS)
        .service(new ShardService() {
          @Override
          public void start(int shard, LeadershipTerm term) {
            String before = running.putIfAbsent(shard, identity);
            if (before != null) {
              overlaps.add("shard " + shard + " started in " + identity + " while running in " + before);
            }
          }

          @Override
          public void stop(int shard) {
            running.remove(shard, identity);
          }
        })
        .start();
    runners.put(identity, runner);
    return runner;
  }

  private Map<String, Set<Integer>> owners(Set<String> among) {
    Map<String, Set<Integer>> owners = new TreeMap<>();
    among.forEach(identity -> owners.put(identity, new TreeSet<>(runners.get(identity).ownedShards().keySet())));
    return owners;
  }

  private boolean fair(Set<String> among) {
    Map<String, Set<Integer>> owners = owners(among);
    List<Integer> all = owners.values().stream().flatMap(Set::stream).sorted().toList();
    int members = among.size();
    return all.equals(IntStream.range(0, SHARDS).boxed().toList()) && owners.values().stream()
        .allMatch(s -> s.size() == SHARDS / members || s.size() == (SHARDS + members - 1) / members);
  }

  private void awaitFair(Set<String> among) {
    Await.until("every shard owned once, fairly, by " + among, () -> fair(among), Duration.ofSeconds(30),
        () -> owners(among) + " running " + new TreeMap<>(running) + " overlaps " + overlaps);
  }

  /**
   * From the server's record of each shard Lease: every change of holder is a take from an empty holder (a release),
   * a hand-over (the previous holder's write naming the next, with the next token and the hand-over's proof) or a take
   * at or after the previous holder's Lease expired (its last renewTime plus its duration); returns the shards that
   * changed hands by expiry, and counts the hand-overs in {@link #handOvers}.
   */
  private Set<Integer> assertNeverOwnedTwice() throws InterruptedException {
    Set<Integer> byExpiry = new TreeSet<>();
    handOvers = 0;
    for (int shard = 0; shard < SHARDS; shard++) {
      String lease = LEASES.shardLease(shard);
      List<LeaseWrite> writes = new ArrayList<>(RealServerRecord.upToNow(api, lease));
      writes.sort(Comparator.comparingLong(LeaseWrite::resourceVersion));
      LeaseSpec previous = null;
      for (LeaseWrite write : writes) {
        String holder = write.holder();
        String before = previous == null || previous.getHolderIdentity() == null ? "" : previous.getHolderIdentity();
        boolean handOver = write.annotations().containsKey(LeaseRecords.HAND_OVER_PROOF) && previous != null
            && write.leaseTransitions() == (previous.getLeaseTransitions() == null ? 0
                : previous.getLeaseTransitions()) + 1;
        if (handOver && !before.isEmpty() && !holder.equals(before)) {
          handOvers++;
        } else if (!holder.isEmpty() && !before.isEmpty() && !holder.equals(before)) {
          ZonedDateTime expiry = previous.getRenewTime().plusSeconds(previous.getLeaseDurationSeconds());
          assertThat(write.spec().getAcquireTime())
              .as("shard %d: %s took it from %s, whose Lease expired at %s; the record %s", shard, holder, before,
                  expiry, RealServerRecord.describe(writes))
              .isAfterOrEqualTo(expiry);
          byExpiry.add(shard);
        }
        previous = write.spec();
      }
    }
    assertThat(overlaps).isEmpty();
    return byExpiry;
  }

  private int handOvers;

  @Test
  void threeReplicasOwnEveryShardOnceAndFairly() throws Exception {
    replica("a");
    replica("b");
    replica("c");
    awaitFair(Set.of("a", "b", "c"));
    assertThat(assertNeverOwnedTwice()).isEmpty();
  }

  @Test
  void aClosedReplicasShardsMoveAtOnce() throws Exception {
    replica("a");
    replica("b");
    ShardedRunner c = replica("c");
    awaitFair(Set.of("a", "b", "c"));

    Set<Integer> itsShards = Set.copyOf(c.ownedShards().keySet());
    long closing = System.nanoTime();
    c.close();
    awaitFair(Set.of("a", "b"));
    long moved = System.nanoTime();
    runners.remove("c");

    assertThat(assertNeverOwnedTwice()).as("no shard changed hands by expiry").isEmpty();
    System.out.println("MEASURED real server sharded close: " + itsShards.size() + " shards moved "
        + Duration.ofNanos(moved - closing).toMillis() + " ms after close() began (one lease duration: "
        + MockApi.LEASE_DURATION.toMillis() + " ms)");
    assertThat(Duration.ofNanos(moved - closing)).isLessThan(MockApi.LEASE_DURATION);

    // close() returned after the membership Lease's release and its delete (conditional on the released record):
    // the closed replica's is gone from the server, the survivors' and every shard's Lease stay.
    List<String> left = api.client().leases().inNamespace(api.namespace()).withLabel(ShardLeases.LABEL,
        LEASES.labelValue()).list().getItems().stream().map(lease -> lease.getMetadata().getName()).sorted().toList();
    assertThat(left).as("the Leases on the server after c closed")
        .doesNotContain(LEASES.memberLease("c"))
        .contains(LEASES.memberLease("a"), LEASES.memberLease("b"))
        .containsAll(IntStream.range(0, SHARDS).mapToObj(LEASES::shardLease).toList());
  }

  @Test
  void aKilledReplicasShardsMoveOnlyAfterTheirLeasesExpired() throws Exception {
    replica("a");
    replica("b");
    ShardedRunner c = replica("c");
    awaitFair(Set.of("a", "b", "c"));

    Set<Integer> itsShards = Set.copyOf(c.ownedShards().keySet());
    long killed = System.nanoTime();
    links.get("c").refuseConnections();
    awaitFair(Set.of("a", "b"));
    System.out.println("MEASURED real server sharded kill: " + itsShards.size() + " shards moved "
        + Duration.ofNanos(System.nanoTime() - killed).toMillis() + " ms after the kill (lease duration "
        + MockApi.LEASE_DURATION.toMillis() + " ms)");
    Await.until("the killed replica stopped its work (at its renew deadline)",
        () -> !running.containsValue("c"), Duration.ofSeconds(10), () -> new TreeMap<>(running));
    assertThat(assertNeverOwnedTwice()).containsAll(itsShards);
  }

  @Test
  void anAddedReplicaGetsItsShareWithoutAnyShardOwnedTwice() throws Exception {
    replica("a");
    replica("b");
    awaitFair(Set.of("a", "b"));
    replica("c");
    awaitFair(Set.of("a", "b", "c"));
    assertThat(owners(Set.of("c")).get("c")).hasSizeBetween(5, 6);
    assertThat(assertNeverOwnedTwice()).isEmpty();
    assertThat(handOvers).as("the joiner's share handed over by name, with no release and no take").isPositive();
  }
}
