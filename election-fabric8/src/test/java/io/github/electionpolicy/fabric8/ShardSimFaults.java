package io.github.electionpolicy.fabric8;

import java.util.SplittableRandom;

/**
 * The faults of one sharding run, drawn from its seed and spread over its fault phase: the network's (a partition of
 * one replica, both ways, requests lost or responses lost; a slow replica; the server down; watch events delayed or
 * dropped), a paused process, and membership churn: scale up (a new replica), scale down (a close), a rolling update
 * (a close, then a replacement under a new identity once it stopped), a crash (the process dies, its events dropped;
 * it restarts under the same identity later) and a graceful restart under the same identity. Churn ends two lease
 * durations before the quiet phase, so every restart has happened once it begins.
 */
final class ShardSimFaults {

  private ShardSimFaults() {}

  enum Kind { PARTITION, SLOW, SERVER_DOWN, DELAY_EVENTS, DROP_EVENTS, PAUSE, SCALE_UP, SCALE_DOWN, ROLLING, CRASH,
    RESTART }

  static void schedule(ShardSim sim, SplittableRandom r) {
    ShardSim.Config c = sim.config();
    long lease = c.leaseNanos();
    long churnEnd = Math.max(1, c.faultEndNanos() - 2 * lease - 1_000_000_000L);
    Kind[] kinds = Kind.values();
    for (int i = 0; i < c.faults(); i++) {
      Kind kind = kinds[r.nextInt(kinds.length)];
      int slot = r.nextInt(ShardSim.SLOTS);
      boolean churn = kind.ordinal() >= Kind.SCALE_UP.ordinal();
      long at = r.nextLong(churn ? churnEnd : c.faultEndNanos());
      // A fault window ends by the quiet phase.
      long duration = Math.min(c.faultEndNanos() - at, 50_000_000L + r.nextLong(2 * lease));
      long restart = r.nextLong(2 * lease);
      long latency = 1 + r.nextLong(500_000_000L);
      int direction = r.nextInt(3);
      sim.at(at, () -> fault(sim, kind, sim.replicas().get(slot), duration, restart, latency, direction));
    }
  }

  static void fault(ShardSim sim, Kind kind, ShardSimReplica replica, long duration, long restart,
      long latency, int direction) {
    SimNetwork network = sim.network();
    int slot = replica.slot;
    sim.trace(() -> "fault " + kind + " " + replica + " for " + duration / 1e6 + "ms");
    switch (kind) {
      case PARTITION -> {
        SimSchedule.Direction d = SimSchedule.Direction.values()[direction % SimSchedule.Direction.values().length];
        window(sim, duration, () -> network.partition(slot, d, 1), () -> network.partition(slot, d, -1));
      }
      // A leg sent while the window lasts may land up to the latency in force at its end after it ended (the longest
      // of the windows that overlap it: SimNetwork keeps it until the last of them ends): the gaps count from then.
      case SLOW -> window(sim, duration, () -> network.slow(slot, latency, 1), () -> network.slow(slot, latency, -1),
          () -> network.slowLatencyNanos(slot));
      case SERVER_DOWN -> window(sim, Math.min(duration, sim.config().leaseNanos()), () -> network.serverDown(1),
          () -> network.serverDown(-1));
      case DELAY_EVENTS -> window(sim, duration, () -> network.delayEvents(latency, 1),
          () -> network.delayEvents(latency, -1), network::eventDelayNanos);
      case DROP_EVENTS -> window(sim, duration, () -> network.dropEvents(1), () -> network.dropEvents(-1));
      case PAUSE -> {
        if (replica.alive && !replica.paused) {
          sim.checks().disturbance(1);
          sim.pause(replica, Math.min(duration, 3 * sim.config().leaseNanos() / 2));
        }
      }
      case SCALE_UP -> {
        for (ShardSimReplica r : sim.replicas()) {
          if (!r.alive && !pending(r)) {
            r.pendingStart = true;
            sim.restartLater(r, 0, r.generation > 0 || r.process > 0);
            return;
          }
        }
      }
      case SCALE_DOWN -> {
        if (live(sim) > 2 && replica.alive && !replica.closing) {
          replica.close();
        }
      }
      case ROLLING -> {
        if (replica.alive && !replica.closing) {
          replica.newIdentityAfterClose = true;
          replica.close();
          replica.restartAfterClose = 0;
        }
      }
      case CRASH -> {
        if (replica.alive) {
          replica.die();
          replica.pendingStart = true;
          sim.restartLater(replica, restart, false);
        }
      }
      case RESTART -> {
        if (replica.alive && !replica.closing) {
          replica.newIdentityAfterClose = false;
          replica.close();
          replica.restartAfterClose = restart;
        }
      }
      default -> throw new IllegalStateException(kind.toString());
    }
  }

  /**
   * Lists left unanswered, as fabric8 7.x left an informer's (seen with the mock server under load: no answer, no
   * failure, no retry, no watch after it), drawn from a stream of their own so that the other faults' draws stay as
   * they were: in one run in two, a window in which every list of one replica's list and watch is sent and never
   * answered, opened by a drop of its watch (its informer lists again, into the window). Only the runner's silence
   * check lists it again ({@link ShardViewFeed#checkSilence}): once a bound of silence (three retry periods or half a
   * lease duration, the longer) has passed since the list, the wait doubling while none is answered. The window is
   * 50 ms to two bounds and 50 ms long and ends two bounds and a lease duration before the quiet phase, so that the
   * restart that lists comes within two bounds of its end (the wait in effect then), before the fairness check
   * begins; the view disturbs the checks until it listed in whole ({@link ShardSim#unansweredLists}), and the bounds
   * count from then.
   */
  static void scheduleUnansweredLists(ShardSim sim, SplittableRandom r) {
    if (r.nextInt(2) != 0) {
      return;
    }
    ShardSim.Config c = sim.config();
    long silence = Math.max(3 * c.retryNanos(), c.leaseNanos() / 2);
    long end = c.faultEndNanos() - 2 * silence - c.leaseNanos();
    int slot = r.nextInt(ShardSim.SLOTS);
    if (end <= 0) {
      return;
    }
    long at = r.nextLong(end);
    long duration = Math.min(end - at, 50_000_000L + r.nextLong(2 * silence));
    sim.at(at, () -> unansweredLists(sim, sim.replicas().get(slot), duration));
  }

  /** Every list of {@code replica}'s list and watch left unanswered for {@code duration} from now. */
  static void unansweredLists(ShardSim sim, ShardSimReplica replica, long duration) {
    sim.trace(() -> "fault UNANSWERED_LISTS " + replica + " for " + duration / 1e6 + "ms");
    window(sim, duration, () -> sim.unansweredLists(replica, 1), () -> sim.unansweredLists(replica, -1));
  }

  private static boolean pending(ShardSimReplica r) {
    return r.pendingStart;
  }

  private static int live(ShardSim sim) {
    int n = 0;
    for (ShardSimReplica r : sim.replicas()) {
      n += r.alive && !r.closing ? 1 : 0;
    }
    return n;
  }

  private static void window(ShardSim sim, long duration, Runnable begin, Runnable end) {
    window(sim, duration, begin, end, () -> 0);
  }

  /**
   * A fault from now for {@code duration}, whose last delayed leg may land {@code lingerNanos} after its end, as read
   * at its end before it is undone: the delay then in force, which an overlapping window of a longer delay may have set
   * (review h-gaps, SimulationShardingCrashGapBound: with its own latency alone, 171 ms, the checks counted the
   * watch events of seed 1208311473 as landed while the 425 ms of an earlier window that overlapped it still held them,
   * each view's in the order sent).
   */
  private static void window(ShardSim sim, long duration, Runnable begin, Runnable end,
      java.util.function.LongSupplier lingerNanos) {
    sim.checks().disturbance(1);
    begin.run();
    sim.at(sim.now() + duration, () -> {
      long linger = lingerNanos.getAsLong();
      end.run();
      sim.checks().disturbance(-1);
      sim.checks().lingers(linger);
    });
  }
}
