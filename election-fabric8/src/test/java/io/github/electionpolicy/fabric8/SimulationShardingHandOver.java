package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.Example;

/**
 * Scripted runs of the sharding simulation ({@link ShardSim}, the real runner) aimed at the named-successor hand-over
 * (cce3d65): closes whose hand-overs name a successor that cannot take the term in, so that the shard waits a whole
 * lease duration where a plain release is taken at once. Lease 1 s, renew deadline 700 ms, retry 200 ms, latency up to
 * 5 ms: a graceful move takes a few round trips (tens of ms), an expiry about a second.
 *
 * <p>The simulation's own gap check does not see these: a closed process ends right after its stop, and a gap within
 * the crash bound of a process's end is held to the crash bound (1,031 ms here), not the graceful one (30 ms). So each
 * run checks the longest gap of any kind itself: no shard may wait for an expiry, since no process crashes.
 */
class SimulationShardingHandOver {

  /** Longer than any graceful move here (a few round trips of at most 10 ms), far shorter than an expiry (1 s). */
  static final long NO_EXPIRY_NANOS = 300_000_000L;

  static ShardSim.Config config(long seed, int replicas, int shards) {
    return new ShardSim.Config(seed, replicas, shards, 1, 700, 200, 233, 2000, 5, 6_000_000_000L,
        6_000_000_000L + ShardSimChecks.fairnessBoundNanos(1_000_000_000L, 200_000_000L) + 3_000_000_000L, 0, false,
        ShardCoordinator.Flaw.NONE, ShardDriverFlaw.NONE);
  }

  /**
   * Closes {@code closed} at 3 s ({@code before} runs first) and gives, for each shard they owned then, its token then
   * and the Lease's token at the end of the run (written to {@code tokens}: shard -> [before, after]). With no fault and
   * nothing else moving, a shard the successor took in (or took free, after a plain release) ends one term on; one it
   * had to wait out, then took, ends two on.
   */
  static ShardSim.Result closeAt3s(ShardSim.Config config, List<Integer> closed, java.util.function.Consumer<ShardSim> before,
      Map<Integer, long[]> tokens) {
    return ShardSim.run(config, sim -> {
      sim.at(3_000_000_000L, () -> {
        before.accept(sim);
        for (int slot : closed) {
          sim.replicas().get(slot).runner.ownedShards().forEach((shard, term) ->
              tokens.put(shard, new long[] {term.leaseTransitions(), -1}));
        }
        for (int slot : closed) {
          sim.replicas().get(slot).close();
        }
      });
      sim.at(config.endNanos() - 1, () -> tokens.forEach((shard, t) ->
          t[1] = sim.server().stored("orders-shard-" + shard).record().leaseTransitions()));
    });
  }

  static Map<Integer, String> movedBy(Map<Integer, long[]> tokens) {
    Map<Integer, String> moved = new TreeMap<>();
    tokens.forEach((shard, t) -> moved.put(shard, t[0] + " -> " + t[1]));
    return moved;
  }

  static Map<Integer, String> movedByOneTerm(Map<Integer, long[]> tokens) {
    Map<Integer, String> moved = new TreeMap<>();
    tokens.forEach((shard, t) -> moved.put(shard, t[0] + " -> " + (t[0] + 1)));
    return moved;
  }

  /**
   * Finding (review h-handover): two replicas join two settled ones at once (8 shards, 4 each); once membership settled,
   * each old owner hands its surplus over by name. On cce3d65 a shard of each of these seeds had no owner for a whole
   * lease duration (1,010 to 1,017 ms; each run's own check holds such a gap to the crash bound, since processes
   * started within a lease duration of it): in seed 141 the surplus runner's stop outlived the renew deadline, so the
   * proof named at the decision was stale by the time the hand-over was written (as {@link #aSlowStopsHandOverIsStillTakenIn});
   * the others are the same or a successor handed more than its share, whose plan finds the extra shard surplus and
   * runs no runner for it. Fixed with the proof following the view until the release, and a successor whose plan
   * would not keep the shard named no more. Red on cce3d65.
   */
  @Example
  void twoReplicasJoiningAtOnceGetTheirShardsWithoutAnExpiry() {
    for (long seed : new long[] {119, 126, 141, 146}) {
      ShardSim.Config config = config(seed, 2, 8);
      ShardSim.Result result = ShardSim.run(config, sim -> sim.at(2_000_000_000L, () -> {
        sim.restartLater(sim.replicas().get(2), 0, false);
        sim.restartLater(sim.replicas().get(3), 0, false);
      }));
      assertThat(result.checks().violations).as("seed %d", seed).isEmpty();
      assertThat(longestGap(result)).as("seed %d: the longest time a shard had no owner, ns", seed)
          .isLessThan(NO_EXPIRY_NANOS);
    }
  }

  static long longestGap(ShardSim.Result result) {
    return Arrays.stream(result.checks().maxGapNanos).max().orElse(0);
  }

  /**
   * Finding (review h-handover): two replicas of four close at the same instant (a scale-down by two). Each decides its
   * hand-overs while the other is still live in its view, so each names the other as the successor of a shard (here
   * replica-0 hands shard 4 to replica-1, which hands shard 1 to replica-0). The successor is leaving: it runs no runner
   * for the shard and never takes it in, and the members that stay see it held by a departed member until it expires,
   * a lease duration later (982 ms), though each leaving mark was on the server 6 ms before the hand-over that named
   * its replica was written. Red on cce3d65.
   *
   * <p>Fixed first by having leavers release instead of naming; since a leaver names its successors again, from the
   * first view that shows its own mark (so no member whose mark was stored before its own), and a leaver named from a
   * view behind its mark stays, declining, while its view shows an earlier leaver holding a shard
   * ({@code ShardCoordinator.lingers}; {@link SimulationShardingLeaveByTwo}). Here replica-1's view, which shows its own
   * mark but not replica-0's yet, names replica-0 for shard 4; replica-0 stays and declines it: that shard's token moves
   * by two (the hand-over, then the take of the member that stays), every other by one, and none waits out a term.
   */
  @Example
  void twoReplicasClosingAtOnceHandNoShardToEachOther() {
    Map<Integer, long[]> tokens = new TreeMap<>();
    List<String> shard4 = new java.util.ArrayList<>();
    ShardSim.Result result = closeAt3s(config(11, 4, 8), List.of(0, 1), sim -> {
      for (long t = 3_000_000_000L; t < 5_000_000_000L; t += 1_000_000L) {
        sim.at(t, () -> {
          LeaseRecord record = sim.server().stored("orders-shard-4").record();
          String now = record.holder() + "@" + record.transitions() + (record.handOverProof() != null ? "+proof" : "");
          if (shard4.isEmpty() || !shard4.get(shard4.size() - 1).equals(now)) {
            shard4.add(now);
          }
        });
      }
    }, tokens);
    assertThat(result.checks().violations).isEmpty();
    assertThat(tokens).as("the closed replicas' shards").isNotEmpty();
    assertThat(shard4).as("shard 4's Lease as stored: handed to the other leaver, declined, taken by a stayer")
        .containsExactly("replica-1@0", "replica-0@1+proof", "null@1", "replica-2@2");
    Map<Integer, String> expected = movedByOneTerm(tokens);
    expected.put(4, tokens.get(4)[0] + " -> " + (tokens.get(4)[0] + 2));
    assertThat(movedBy(tokens)).as("each closed replica's shard: its token at the close -> at the end")
        .isEqualTo(expected);
    assertThat(longestGap(result)).as("the longest time a shard had no owner, ns").isLessThan(NO_EXPIRY_NANOS);
  }

  /**
   * Finding (review h-handover): a hand-over's proof is the successor's membership version the view showed when the
   * coordinator decided the hand-over, but the hand-over is written only once the shard's work stopped. When the stop
   * takes longer than the renew deadline (here 900 ms against 700 ms; with production's defaults, a stop of 8 s or so
   * against 10 s), the membership write the proof names was sent more than a renew deadline before, so the successor
   * cannot take the term in: it waits it out as another process's term under its identity, a whole lease duration,
   * where a plain release would have been taken at once. Red on cce3d65.
   */
  @Example
  void aSlowStopsHandOverIsStillTakenIn() {
    Map<Integer, long[]> tokens = new TreeMap<>();
    ShardSim.Result result = closeAt3s(config(12, 3, 6), List.of(0),
        sim -> sim.replicas().get(0).callbackDelayNanos = 900_000_000L, tokens);
    assertThat(result.checks().violations).isEmpty();
    assertThat(tokens).as("the closed replica's shards").isNotEmpty();
    assertThat(movedBy(tokens)).as("each closed replica's shard: its token at the close -> at the end")
        .isEqualTo(movedByOneTerm(tokens));
  }
}
