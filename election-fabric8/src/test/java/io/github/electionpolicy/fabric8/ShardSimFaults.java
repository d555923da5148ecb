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
      // A leg sent while the window lasts may land up to its latency after it ended: the gaps are counted from then.
      case SLOW -> window(sim, duration, () -> network.slow(slot, latency, 1), () -> network.slow(slot, latency, -1),
          latency);
      case SERVER_DOWN -> window(sim, Math.min(duration, sim.config().leaseNanos()), () -> network.serverDown(1),
          () -> network.serverDown(-1));
      case DELAY_EVENTS -> window(sim, duration, () -> network.delayEvents(latency, 1),
          () -> network.delayEvents(latency, -1), latency);
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
    window(sim, duration, begin, end, 0);
  }

  /** A fault from now for {@code duration}, whose last delayed leg may land {@code lingerNanos} after its end. */
  private static void window(ShardSim sim, long duration, Runnable begin, Runnable end, long lingerNanos) {
    sim.checks().disturbance(1);
    begin.run();
    sim.at(sim.now() + duration, () -> {
      end.run();
      sim.checks().disturbance(-1);
      sim.checks().lingers(lingerNanos);
    });
  }
}
