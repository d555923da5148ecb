package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Example;

/**
 * Finding (review h-decline): a hand-over this process declined is taken in again by its next runner of the shard, from
 * a view that lags its own writes, while another replica runs the shard under the next token.
 *
 * <p>{@code ShardHandOvers.led} (what {@code LeaseProtocol.ledBefore} tells a new runner) is fed only by a runner that
 * published LEADING. A runner that declines a hand-over (a {@code Decline} runner, or a closing follower) takes the
 * term in as a leader only to release it, and publishes nothing: the token it released is not remembered. A later
 * runner of the same process, told what the lagging view shows (the hand-over, still naming it, its proof one of the
 * membership runner's last writes within the renew deadline) takes it in as its own, dated from the proof's send time.
 *
 * <p>2 replicas, 6 shards (3 each), lease 1 s, renew deadline 700 ms, retry 100 ms. At 2 s replica-2 joins; replica-1's
 * callbacks are slow (300 ms), so its hand-over comes ~300 ms after replica-0's. Once replica-2 owns replica-0's shard,
 * its list and watch lags ({@code lag}) and its callbacks are slow; once replica-1's hand-over to it is on the server,
 * its membership Lease is deleted by hand (as {@link SimulationShardingReAdopt} does: any loss of the membership Lease
 * within the proof's renew deadline). Replica-2 lapses, closes its shard runner (a slow stop), and its lagging view then
 * shows the hand-over: lapsed, it declines it (a compare-and-set release, no work). The other replicas, which count
 * replica-2 out, take the shard at once (token + 2). Replica-2's membership runner takes its Lease again, its shard
 * runner stops, it joins again and plans from the lagging view, which still shows the hand-over it declined: its new
 * runner takes that hand-over in and starts the shard's work under the token it released, beside the replica that took
 * it since.
 */
class SimulationShardingDeclineReAdopt {

  static ShardSim.Result run(long seed, long lagMillis, long slowMillis) {
    ShardSim.Config config = new ShardSim.Config(seed, 2, 6, 1, 700, 100, 233, 2000, 5, 6_000_000_000L,
        6_000_000_000L + ShardSimChecks.fairnessBoundNanos(1_000_000_000L, 100_000_000L) + 3_000_000_000L, 0, false,
        ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE);
    boolean[] lagged = new boolean[1];
    boolean[] deleted = new boolean[1];
    return ShardSim.run(config, sim -> {
      ShardSimReplica oldOwner = sim.replicas().get(1);
      ShardSimReplica successor = sim.replicas().get(2);
      sim.at(2_000_000_000L, () -> {
        oldOwner.callbackDelayNanos = 300_000_000L;
        sim.restartLater(successor, 0, false);
      });
      for (long t = 2_000_000_000L; t < 4_500_000_000L; t += 1_000_000L) {
        sim.at(t, () -> {
          if (successor.runner == null) {
            return;
          }
          if (!lagged[0] && !successor.runner.ownedShards().isEmpty()) {
            lagged[0] = true;
            sim.lagView(successor, lagMillis * 1_000_000L);
            successor.callbackDelayNanos = slowMillis * 1_000_000L;
          } else if (lagged[0] && !deleted[0]) {
            for (int shard = 0; shard < 6; shard++) {
              ShardSimServer.Stored stored = sim.server().stored("orders-shard-" + shard);
              if (stored != null && successor.identity.equals(stored.record().holder())
                  && stored.record().handOverProof() != null
                  && !successor.runner.ownedShards().containsKey(shard)) {
                deleted[0] = true;
                sim.server().deleteByHand("orders-member-" + successor.identity);
                // Its loss handled slowly (its membership not taken again before the decline), then quick callbacks.
                sim.at(sim.now() + 200_000_000L, () -> successor.callbackDelayNanos = -1);
                return;
              }
            }
          }
        });
      }
    });
  }

  /**
   * Red on a75b31c: seed 2, lag 300 ms: replica-2 declines shard 5's hand-over (token 1) at 2,814 ms, replica-1 takes
   * it (token 2) at 2,820 ms, and replica-2's next runner takes token 1 in again at 2,916 ms and starts its work: both
   * answer shard 5 as their own until replica-2's first renewal conflicts. Only the violations of safety are asked
   * for here (a shard answered as its own in two replicas, or under a term whose work stopped): the membership Lease
   * deleted by hand is a fault of its own, whose gaps this script does not count.
   */
  @Example
  void aDeclinedHandOverIsNotTakenInAgainByTheNextRunnerFromALaggingView() {
    List<String> failures = new ArrayList<>();
    for (long lag : new long[] {250, 300, 350}) {
      for (long seed = 1; seed <= 4; seed++) {
        List<String> unsafe = run(seed, lag, 300).checks().violations.stream()
            .filter(violation -> violation.contains("answers shard")).toList();
        if (!unsafe.isEmpty()) {
          failures.add("seed " + seed + " lag " + lag + ": " + unsafe);
        }
      }
    }
    assertThat(failures).isEmpty();
  }
}
