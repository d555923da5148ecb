package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Example;

/**
 * Finding (review h-resight): a hand-over to a replica that will not run it (it leaves), seen before the answer of the
 * membership write its proof names, is neither declined nor taken in: the shard waits out the term, a lease duration.
 *
 * <p>4921b36 has every runner of a shard look again at such a hand-over when a membership renewal is answered
 * ({@code ShardDriver.sightedAgain}). But a runner that closes (a contending runner of a leaver, or a {@code Decline}
 * runner, which is closed as it starts) finishes at its close when the proof is not yet one of its own writes
 * ({@code LeaseProtocolAcquiring.declineOrFinish}): it is gone when the answer comes, and the coordinator starts a
 * {@code Decline} runner for a shard once only. The hand-over is then left to expire.
 *
 * <p>2 replicas, 6 shards, lease 1 s, renew deadline 700 ms, retry 200 ms. At 2 s replica-2 joins, the answers to its
 * membership writes reaching it {@code lateMillis} late (as {@code ShardedRunnerFaultsTest.aHandOverNamingAMembership
 * WriteNotYetAnsweredIsTakenInOnceItIs}); the moment the server stores the first hand-over to it, replica-2 closes (a
 * scale-down right after a scale-up). No fault, no crash: no shard should stay handed over to replica-2, neither renewed
 * nor released, for anything near a lease duration.
 */
class SimulationShardingLateProofDecline {

  /** Longer than any graceful move here (a few round trips and the late answer), far shorter than an expiry (1 s). */
  static final long NO_EXPIRY_NANOS = 400_000_000L;

  /** The longest any shard Lease stayed stored as the same hand-over to replica-2, in ns. */
  static long longestHandOver(long seed, long lateMillis) {
    ShardSim.Config config = new ShardSim.Config(seed, 2, 6, 1, 700, 200, 233, 2000, 5, 6_000_000_000L,
        6_000_000_000L + ShardSimChecks.fairnessBoundNanos(1_000_000_000L, 200_000_000L) + 3_000_000_000L, 0, false,
        ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE);
    Map<String, Long> since = new HashMap<>();
    long[] longest = {0};
    boolean[] closed = {false};
    ShardSim.run(config, sim -> {
      ShardSimReplica joiner = sim.replicas().get(2);
      sim.at(2_000_000_000L, () -> {
        joiner.membershipAnswerDelayNanos = lateMillis * 1_000_000L;
        sim.restartLater(joiner, 0, false);
      });
      for (long t = 2_000_000_000L; t < 6_000_000_000L; t += 1_000_000L) {
        sim.at(t, () -> {
          for (int shard = 0; shard < 6; shard++) {
            String name = "orders-shard-" + shard;
            ShardSimServer.Stored stored = sim.server().stored(name);
            boolean handedOver = stored != null && joiner.identity.equals(stored.record().holder())
                && stored.record().handOverProof() != null;
            String key = name + "@" + (handedOver ? stored.record().resourceVersion() : "");
            since.keySet().removeIf(k -> k.startsWith(name + "@") && !k.equals(key));
            if (handedOver) {
              long from = since.computeIfAbsent(key, k -> sim.now());
              longest[0] = Math.max(longest[0], sim.now() - from);
              if (!closed[0]) {
                closed[0] = true;
                joiner.close();
              }
            }
          }
        });
      }
    });
    return longest[0];
  }

  @Example
  void aHandOverToALeaverSeenBeforeItsProofWasAnsweredIsDeclinedNotLeftToExpire() {
    List<String> failures = new ArrayList<>();
    for (long late : new long[] {100, 150}) {
      for (long seed = 1; seed <= 4; seed++) {
        long longest = longestHandOver(seed, late);
        if (longest > NO_EXPIRY_NANOS) {
          failures.add("seed " + seed + " late " + late + ": handed over to replica-2 for " + longest / 1_000_000
              + " ms");
        }
      }
    }
    assertThat(failures).isEmpty();
  }
}
