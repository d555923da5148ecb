package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.SimSchedule.Close;
import io.github.electionpolicy.fabric8.SimSchedule.Crash;
import io.github.electionpolicy.fabric8.SimSchedule.DeleteLease;
import io.github.electionpolicy.fabric8.SimSchedule.Direction;
import io.github.electionpolicy.fabric8.SimSchedule.FailingTakeover;
import io.github.electionpolicy.fabric8.SimSchedule.Fault;
import io.github.electionpolicy.fabric8.SimSchedule.HandOverClose;
import io.github.electionpolicy.fabric8.SimSchedule.LeaderTrouble;
import io.github.electionpolicy.fabric8.SimSchedule.SlowFollowersThenLeaderCrash;
import io.github.electionpolicy.fabric8.SimSchedule.Foreign;
import io.github.electionpolicy.fabric8.SimSchedule.ForeignKind;
import io.github.electionpolicy.fabric8.SimSchedule.Partition;
import io.github.electionpolicy.fabric8.SimSchedule.Pause;
import io.github.electionpolicy.fabric8.SimSchedule.ReconcilerTrouble;
import io.github.electionpolicy.fabric8.SimSchedule.ReplicaSpec;
import io.github.electionpolicy.fabric8.SimSchedule.ServerDown;
import io.github.electionpolicy.fabric8.SimSchedule.Slow;
import io.github.electionpolicy.fabric8.SimSchedule.Trouble;
import io.github.electionpolicy.fabric8.SimSchedule.WatchKind;
import io.github.electionpolicy.fabric8.SimSchedule.WatchTrouble;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * jqwik arbitraries for {@link SimSchedule}s: valid timings (as {@link LeaseSettings} accepts them), sometimes
 * shared by all replicas and sometimes different per replica (a rolling update), clocks that drift within
 * ±{@value #MAX_DRIFT_PPM} ppm with wall clocks skewed by up to an hour, and up to {@code 12 × scale} faults
 * over a fault phase of 30 to 120 s × scale. Everything shrinks: fewer faults, fewer replicas, shorter windows.
 */
final class SimSchedules {

  /**
   * The drift bound the simulation holds clocks to: 0.1 % either way, so one clock runs faster than another by
   * at most about 0.2 %. The guarantees need far less: a follower's clock may run faster than the leader's by
   * less than (leaseDuration - renewDeadline - stop time) / renewDeadline, i.e. roughly
   * (leaseDuration - renewDeadline) / leaseDuration; the generated margins are at least 10 % of the lease.
   */
  static final int MAX_DRIFT_PPM = 1000;

  private static final long HOUR_MILLIS = 3_600_000L;

  private SimSchedules() {}

  static Arbitrary<SimSchedule> schedules(int scale) {
    Arbitrary<List<ReplicaSpec>> replicas = Combinators.combine(replica().list().ofMinSize(2).ofMaxSize(5),
        Arbitraries.of(true, false), Arbitraries.of(false, false, true)).as(SimSchedules::maybeShared);
    return Combinators.combine(Arbitraries.longs(), replicas, faults(scale).list().ofMaxSize(12 * scale),
            Arbitraries.longs().between(30_000, 120_000).map(ms -> ms * scale),
            Arbitraries.of(1L, 5L, 20L, 50L))
        .as(SimSchedule::new);
  }

  /**
   * Apart from a rolling update, all replicas share the first one's timings. With {@code oneUnelected}, the last
   * replica runs unelected (a process whose decision is {@code RUN_UNELECTED}, beside the contenders: the
   * operator's mistake the decision log warns of); the first one always contends.
   */
  private static List<ReplicaSpec> maybeShared(List<ReplicaSpec> replicas, boolean shared, boolean oneUnelected) {
    List<ReplicaSpec> same = new ArrayList<>();
    ReplicaSpec first = replicas.get(0);
    for (ReplicaSpec r : replicas) {
      same.add(!shared ? r : new ReplicaSpec(first.leaseSeconds(), first.renewDeadlineMillis(),
          first.retryPeriodMillis(), first.requestTimeoutMillis(), r.lossPolicy(), r.reconcilers(), r.driftPpm(),
          r.wallOffsetMillis(), r.originNearWrap(), false, r.readiness()));
    }
    if (oneUnelected) {
      same.set(same.size() - 1, same.get(same.size() - 1).asUnelected());
    }
    return same;
  }

  /**
   * Valid timings from fractions (no flatMap, which makes generation slow): a safety margin of 10 % to 50 % of
   * the lease (at least 300 ms), a retry period between renewDeadline / 6 and renewDeadline / 1.2, a request
   * timeout between 200 ms and renewDeadline / 2. Short leases are likelier: they make more steps per second.
   */
  private static Arbitrary<ReplicaSpec> replica() {
    Arbitrary<Integer> lease = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(3, Arbitraries.integers().between(1, 5)),
        net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(6, 20)));
    Arbitrary<Integer> permille = Arbitraries.integers().between(0, 1000);
    Arbitrary<int[]> fractions = Combinators.combine(permille, permille, permille)
        .as((a, b, c) -> new int[] {a, b, c});
    Arbitrary<Object[]> kinds = Combinators.combine(
            Arbitraries.of(LossPolicy.Kind.RECONTEND, LossPolicy.Kind.EXIT, LossPolicy.Kind.CUSTOM),
            Arbitraries.of(Readiness.class))
        .as((policy, readiness) -> new Object[] {policy, readiness});
    return Combinators.combine(lease, fractions, kinds,
            Arbitraries.integers().between(1, 3),
            Arbitraries.integers().between(-MAX_DRIFT_PPM, MAX_DRIFT_PPM),
            Arbitraries.oneOf(Arbitraries.just(0L), Arbitraries.longs().between(-HOUR_MILLIS, HOUR_MILLIS)),
            Arbitraries.of(false, true))
        .as((seconds, f, k, reconcilers, drift, skew, wrap) -> {
          LossPolicy.Kind policy = (LossPolicy.Kind) k[0];
          long leaseMillis = seconds * 1000L;
          long minMargin = Math.max(300, leaseMillis / 10);
          long maxMargin = Math.max(minMargin, Math.min(leaseMillis / 2, leaseMillis - 400));
          long renew = leaseMillis - between(minMargin, maxMargin, f[0]);
          long maxRetry = (renew * 10 - 1) / 12;
          long retry = between(Math.min(maxRetry, Math.max(100, renew / 6)), maxRetry, f[1]);
          long timeout = between(200, renew / 2, f[2]);
          return new ReplicaSpec(seconds, renew, retry, timeout, policy, reconcilers, drift, skew, wrap, false,
              (Readiness) k[1]);
        });
  }

  private static long between(long low, long high, int permille) {
    return low + (high - low) * permille / 1000;
  }

  private static Arbitrary<Fault> faults(int scale) {
    Arbitrary<Long> at = Arbitraries.longs().between(0, 120_000L * scale - 1);
    Arbitrary<Integer> replica = Arbitraries.integers().between(0, 4);
    Arbitrary<Long> window = Arbitraries.longs().between(200, 20_000);
    Arbitrary<Long> restart = Arbitraries.longs().between(0, 10_000);
    List<Arbitrary<? extends Fault>> kinds = new ArrayList<>();
    kinds.add(Combinators.combine(replica, at, window, Arbitraries.of(Direction.class)).as(Partition::new));
    kinds.add(Combinators.combine(at, window).as(ServerDown::new));
    kinds.add(Combinators.combine(replica, at, window, Arbitraries.longs().between(100, 5_000)).as(Slow::new));
    kinds.add(Combinators.combine(replica, at, restart).as(Crash::new));
    kinds.add(Combinators.combine(replica, at, Arbitraries.longs().between(200, 45_000)).as(Pause::new));
    kinds.add(Combinators.combine(replica, at, Arbitraries.of(false, true), restart).as(Close::new));
    kinds.add(at.map(a -> new Foreign(a, ForeignKind.BUMP_RENEW_TIME, 0)));
    kinds.add(at.map(a -> new Foreign(a, ForeignKind.EDIT_HOLDER, 0)));
    kinds.add(Combinators.combine(at, Arbitraries.integers().between(0, 1000))
        .as((a, value) -> new Foreign(a, ForeignKind.SET_TRANSITIONS, value)));
    kinds.add(at.map(DeleteLease::new));
    kinds.add(Combinators.combine(at, Arbitraries.longs().between(200, 10_000), Arbitraries.of(WatchKind.class))
        .as(WatchTrouble::new));
    kinds.add(Combinators.combine(replica, at, Arbitraries.longs().between(200, 15_000),
        Arbitraries.of(Trouble.class)).as(ReconcilerTrouble::new));
    kinds.add(Combinators.combine(replica, at, Arbitraries.longs().between(200, 15_000))
        .as((r, a, w) -> new ReconcilerTrouble(r, a, w, Trouble.START_THROWS_EXCEPTION)));
    // A leader's services have started: what can still go wrong is how they stop.
    kinds.add(Combinators.combine(at, Arbitraries.longs().between(400, 8_000),
        Arbitraries.of(Trouble.STOP_HANGS, Trouble.STOP_THROWS_EXCEPTION, Trouble.STOP_THROWS_ERROR),
        Arbitraries.of(SimSchedule.Then.class)).as(LeaderTrouble::new));
    kinds.add(Combinators.combine(at, Arbitraries.longs().between(0, 120), Arbitraries.integers().between(0, 4))
        .as(HandOverClose::new));
    kinds.add(at.map(SimSchedule.CloseMeetsLostRenewalAnswer::new));
    kinds.add(Combinators.combine(at, Arbitraries.longs().between(100, 3_000), Arbitraries.longs().between(0, 2_000))
        .as(SlowFollowersThenLeaderCrash::new));
    kinds.add(Combinators.combine(at, Arbitraries.longs().between(1_000, 10_000), Arbitraries.longs().between(50, 800))
        .as(FailingTakeover::new));
    kinds.add(Combinators.combine(replica, at, Arbitraries.of(SimSchedule.LoopFaultKind.class),
        Arbitraries.integers().between(1, 2)).as(SimSchedule.LoopFault::new));
    return Arbitraries.oneOf(kinds);
  }
}
