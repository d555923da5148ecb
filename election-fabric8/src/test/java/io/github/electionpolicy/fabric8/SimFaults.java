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
import io.github.electionpolicy.fabric8.SimSchedule.Partition;
import io.github.electionpolicy.fabric8.SimSchedule.Pause;
import io.github.electionpolicy.fabric8.SimSchedule.ReconcilerTrouble;
import io.github.electionpolicy.fabric8.SimSchedule.ServerDown;
import io.github.electionpolicy.fabric8.SimSchedule.Slow;
import io.github.electionpolicy.fabric8.SimSchedule.WatchTrouble;

/**
 * Turns a schedule's faults into simulator events: each window starts at its time and ends no later than the
 * quiet tail, so the tail is free of faults. Any fault marks the replicas that are closing as disturbed, so a
 * close is only expected to release when nothing got in its way.
 */
final class SimFaults {

  private static final long MS = 1_000_000L;

  private SimFaults() {}

  static void schedule(Simulator sim, SimSchedule schedule) {
    for (Fault fault : schedule.faults()) {
      long at = fault.at() * MS;
      if (at >= sim.quietFromNanos()) {
        continue;
      }
      sim.at(at, () -> {
        disturbClosing(sim);
        apply(sim, fault);
      });
    }
    sim.at(sim.quietFromNanos(), () -> {
      for (SimReplica r : sim.replicas()) {
        r.disarm();
      }
    });
  }

  private static void apply(Simulator sim, Fault fault) {
    SimNetwork net = sim.network();
    int n = sim.replicas().size();
    if (fault instanceof Partition p) {
      int r = p.replica() % n;
      net.partition(r, p.direction(), 1);
      if (p.direction() != Direction.REQUESTS_LOST) {
        sim.breakWatches(sim.replicas().get(r), false);
      }
      window(sim, p.forMillis(), () -> net.partition(r, p.direction(), -1));
    } else if (fault instanceof ServerDown d) {
      net.serverDown(1);
      sim.breakWatches(null, false);
      window(sim, d.forMillis(), () -> net.serverDown(-1));
    } else if (fault instanceof Slow s) {
      int r = s.replica() % n;
      net.slow(r, s.latencyMillis() * MS, 1);
      window(sim, s.forMillis(), () -> net.slow(r, s.latencyMillis() * MS, -1));
    } else if (fault instanceof Crash c) {
      sim.replicas().get(c.replica() % n).crash(c.restartAfterMillis() * MS);
    } else if (fault instanceof Pause p) {
      sim.replicas().get(p.replica() % n).pause(Math.min(p.forMillis() * MS, sim.quietFromNanos() - sim.now()));
    } else if (fault instanceof Close c) {
      SimReplica r = sim.replicas().get(c.replica() % n);
      if (!r.alive) {
        return;
      }
      if (c.fromCallback()) {
        r.armCloseFromCallback(c.restartAfterMillis() * MS);
      } else {
        r.close(c.restartAfterMillis() * MS);
      }
    } else if (fault instanceof SimSchedule.LoopFault f) {
      // Two in a row strike the leader if one leads: its failure path has the most to do (its term's Event, its
      // services' stop), and a second failure on that path ends the runner through its emergency stop.
      SimReplica leader = f.count() > 1 ? leader(sim) : null;
      (leader != null ? leader : sim.replicas().get(f.replica() % n)).loopFault(f.kind(), f.count());
    } else if (fault instanceof Foreign f) {
      foreign(sim, f);
    } else if (fault instanceof DeleteLease) {
      sim.leaseDeleted();
      sim.server().delete();
    } else if (fault instanceof WatchTrouble w) {
      switch (w.kind()) {
        case DROP_EVENTS:
          net.dropEvents(1);
          window(sim, w.forMillis(), () -> net.dropEvents(-1));
          break;
        case DELAY_EVENTS:
          net.delayEvents(w.forMillis() * MS, 1);
          window(sim, w.forMillis(), () -> net.delayEvents(w.forMillis() * MS, -1));
          break;
        default:
          sim.breakWatches(null, true);
      }
    } else if (fault instanceof LeaderTrouble t) {
      SimReplica r = leader(sim);
      if (r == null) {
        return;
      }
      r.troubles[t.trouble().ordinal()]++;
      window(sim, t.forMillis(), () -> r.troubles[t.trouble().ordinal()]--);
      int process = r.process;
      sim.at(sim.now() + t.forMillis() * MS / 4, () -> {
        if (!r.alive || r.process != process) {
          return;
        }
        disturbClosing(sim); // what follows is a fault of its own (a close, a cut-off) when it strikes
        switch (t.then()) {
          case CLOSE -> r.close(500 * MS);
          case CLOSE_FROM_CALLBACK -> r.armCloseFromCallback(500 * MS);
          default -> {
            net.partition(r.index, Direction.BOTH, 1);
            sim.breakWatches(r, false);
            window(sim, t.forMillis(), () -> net.partition(r.index, Direction.BOTH, -1));
          }
        }
      });
    } else if (fault instanceof HandOverClose h) {
      SimReplica r = leader(sim);
      if (r == null) {
        return;
      }
      r.close(500 * MS);
      SimReplica follower = sim.replicas().get(h.follower() % n);
      if (follower != r) {
        int process = follower.process;
        sim.onNextRelease(() -> sim.at(sim.now() + h.gapMillis() * MS, () -> {
          if (follower.alive && follower.process == process) {
            follower.close(500 * MS);
          }
        }));
      }
    } else if (fault instanceof SimSchedule.CloseMeetsLostRenewalAnswer) {
      SimReplica r = leader(sim);
      if (r != null) {
        r.armCloseAtNextRenewal(500 * MS);
      }
    } else if (fault instanceof FailingTakeover f) {
      SimReplica r = leader(sim);
      if (r == null) {
        return;
      }
      sim.invariants().excuseLoad(1);
      // The churn ends with the backoff that follows each failed term: within two of the longest leases after the
      // trouble ends (at the quiet tail at the latest), so the excuse may reach into the tail.
      long troubleEnds = Math.min(sim.now() + f.forMillis() * MS, sim.quietFromNanos());
      sim.at(troubleEnds + 2 * sim.maxLeaseMillis() * MS, () -> sim.invariants().excuseLoad(-1));
      for (SimReplica other : sim.replicas()) {
        if (other != r) {
          other.troubles[SimSchedule.Trouble.START_THROWS_EXCEPTION.ordinal()]++;
          net.slow(other.index, f.latencyMillis() * MS, 1);
          window(sim, f.forMillis(), () -> {
            other.troubles[SimSchedule.Trouble.START_THROWS_EXCEPTION.ordinal()]--;
            net.slow(other.index, f.latencyMillis() * MS, -1);
          });
        }
      }
      r.close(500 * MS);
    } else if (fault instanceof SlowFollowersThenLeaderCrash s) {
      SimReplica r = leader(sim);
      if (r == null) {
        return;
      }
      long window = s.gapMillis() + 2 * sim.maxLeaseMillis();
      for (SimReplica other : sim.replicas()) {
        if (other != r) {
          net.slow(other.index, s.latencyMillis() * MS, 1);
          window(sim, window, () -> net.slow(other.index, s.latencyMillis() * MS, -1));
        }
      }
      int process = r.process;
      sim.at(sim.now() + s.gapMillis() * MS, () -> {
        if (r.alive && r.process == process) {
          // A fault of its own when it strikes: a replica closing then cannot be expected to release.
          disturbClosing(sim);
          // Cut off rather than crashed: its services run until its term ends, as the followers take over.
          net.partition(r.index, Direction.BOTH, 1);
          sim.breakWatches(r, false);
          window(sim, 2 * sim.maxLeaseMillis(), () -> net.partition(r.index, Direction.BOTH, -1));
        }
      });
    } else if (fault instanceof ReconcilerTrouble t) {
      SimReplica r = sim.replicas().get(t.replica() % n);
      r.troubles[t.trouble().ordinal()]++;
      window(sim, t.forMillis(), () -> r.troubles[t.trouble().ordinal()]--);
    }
  }

  private static void foreign(Simulator sim, Foreign f) {
    SimApiServer server = sim.server();
    java.time.Instant wall = SimClock.EPOCH.plusNanos(sim.now());
    switch (f.kind()) {
      case BUMP_RENEW_TIME:
        server.foreignBumpRenewTime(wall);
        break;
      case EDIT_HOLDER:
        // The foreign holder promises the longest lease of any replica: one with a shorter lease than the leader's
        // renew deadline could be followed while the leader still runs, which no protocol can prevent (it stole a
        // held Lease); and a longer one would only push liveness past its bound.
        server.foreignEditHolder("foreign-writer", (int) (sim.maxLeaseMillis() / 1000), wall);
        break;
      default:
        if (server.current() != null) {
          sim.invariants().foreignTransitions(f.value());
        }
        server.foreignSetTransitions(f.value());
    }
  }

  /** The replica that leads now, if any. */
  private static SimReplica leader(Simulator sim) {
    for (SimReplica r : sim.replicas()) {
      if (r.alive && !r.paused && r.runner != null && r.runner.state().kind() == ElectionState.Kind.LEADING) {
        return r;
      }
    }
    return null;
  }

  private static void window(Simulator sim, long forMillis, Runnable end) {
    sim.at(Math.min(sim.now() + forMillis * MS, sim.quietFromNanos()), end);
  }

  private static void disturbClosing(Simulator sim) {
    for (SimReplica r : sim.replicas()) {
      r.closeDisturbed = true;
    }
  }
}
