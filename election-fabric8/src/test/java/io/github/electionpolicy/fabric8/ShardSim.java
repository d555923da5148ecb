package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.FailureKind;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A discrete-event simulation of 2 to 6 replicas of the real {@link ShardedRunner} over an API server with many
 * Leases ({@link ShardSimServer}), as {@link Simulator} is for one {@link ElectionRunner}: a priority queue of
 * (time, sequence, event), one thread, no sleeps and no wall clock; the same {@link SimNetwork} (per-replica
 * partitions, lost requests or responses, slow legs, the server down, delayed and dropped watch events) and {@link
 * SimClock}s, pauses of a process, and membership churn (scale up, scale down, rolling update, crash, restart under
 * the same identity). {@link ShardSimChecks} holds the invariants; a run is replayed by its seed alone.
 *
 * <p>Each replica's list and watch by label is reported to its runner as production's {@link ShardLeaseSource}
 * reports a fabric8 informer's: a list one Lease at a time, each in a step of the replica's own, in the API server's
 * order (by name: the members' Leases before the shards'), then {@link ShardLeaseSource.Sink#listed} once every
 * Lease of it was reported ({@link #list}), and the watch's events after it. The other replicas' steps and the
 * replica's own loop run between those steps, so a runner that planned from a part of its first list would be seen
 * doing so ({@link ShardSimChecks#contends}).
 *
 * <p>Not thread-safe: one run on one thread.
 */
final class ShardSim {

  static final String NAMESPACE = "sim";
  static final String LEASE = "orders";
  static final int SLOTS = 6;
  static final boolean TRACE = Boolean.getBoolean("sim.trace");

  /**
   * A replica's loss policy for each shard's term: contend again; exit (the exiter ends the process); a {@link
   * LossHandler} that answers {@code STOP}; or exit through an exiter that returns (a test's, or a {@code System.exit}
   * a security manager refused). The last two stop the replica on a loss: it leaves ({@link ShardSimChecks#lossStop}).
   */
  enum OnLoss { RECONTEND, EXIT, STOP, EXIT_RETURNS }

  /**
   * One run's parameters, all drawn from its seed (see {@link #config}); {@code stopSlots}: the replica slots (a bit
   * each) whose loss policy stops the replica, {@code exitOnLoss} that of the others (see {@link #onLoss}).
   */
  record Config(long seed, int initial, int shards, int leaseSeconds, long renewMillis, long retryMillis,
      long timeoutMillis, long stopTimeoutMillis, long maxLatencyMillis, long faultEndNanos, long endNanos,
      int faults, boolean exitOnLoss, int stopSlots, ShardCoordinator.Flaw flaw, ShardDriverFlaw driverFlaw) {

    /** A scripted run's parameters: no replica's loss policy stops it. */
    Config(long seed, int initial, int shards, int leaseSeconds, long renewMillis, long retryMillis,
        long timeoutMillis, long stopTimeoutMillis, long maxLatencyMillis, long faultEndNanos, long endNanos,
        int faults, boolean exitOnLoss, ShardCoordinator.Flaw flaw, ShardDriverFlaw driverFlaw) {
      this(seed, initial, shards, leaseSeconds, renewMillis, retryMillis, timeoutMillis, stopTimeoutMillis,
          maxLatencyMillis, faultEndNanos, endNanos, faults, exitOnLoss, 0, flaw, driverFlaw);
    }

    /**
     * These parameters with {@code slots} as the slots whose loss policy stops the replica: 0 replays a seed found
     * before such slots were drawn ({@link #stopSlots}) as it was found.
     */
    Config withStopSlots(int slots) {
      return new Config(seed, initial, shards, leaseSeconds, renewMillis, retryMillis, timeoutMillis,
          stopTimeoutMillis, maxLatencyMillis, faultEndNanos, endNanos, faults, exitOnLoss, slots, flaw, driverFlaw);
    }

    long leaseNanos() {
      return leaseSeconds * 1_000_000_000L;
    }

    long retryNanos() {
      return retryMillis * 1_000_000L;
    }

    /**
     * The loss policy of the replica in {@code slot}: exit or contend again, as the run says; in a slot of {@code
     * stopSlots}, the one of the two that stops the replica instead (an exiter that returns, or a handler's STOP), as
     * a rolling update that changes the policy leaves a fleet for a while.
     */
    OnLoss onLoss(int slot) {
      boolean stops = (stopSlots & (1 << slot)) != 0;
      return exitOnLoss ? (stops ? OnLoss.EXIT_RETURNS : OnLoss.EXIT) : stops ? OnLoss.STOP : OnLoss.RECONTEND;
    }
  }

  /** An event; {@code replica} null for the server's and the faults' own. */
  record Event(long time, long seq, ShardSimReplica replica, int process, Runnable action) {}

  /** A runner's watch of one Lease. */
  static final class LeaseWatch {
    final ShardSimReplica replica;
    final int process;
    final String lease;
    final LeaseTransport.WatchEvents events;
    long last;
    boolean open = true;

    LeaseWatch(ShardSimReplica replica, String lease, LeaseTransport.WatchEvents events) {
      this.replica = replica;
      this.process = replica.process;
      this.lease = lease;
      this.events = events;
    }
  }

  /** A replica's list and watch of the controller's Leases by label, as its informer keeps it. */
  private static final class ViewConnection {
    final ShardSimReplica replica;
    final int process;
    final ShardLeaseSource.Sink sink;
    final Map<String, Long> cache = new HashMap<>();
    long last;
    boolean open = true;
    boolean broken;
    // Its last list was sent and never answered (a fault window's: see ShardSimFaults.unansweredLists): no failure,
    // no retry, no watch after it, as fabric8 7.x left one; and whether that counts as a disturbance of the checks
    // until a list of it is reported in whole (its view is as stale as a failed one's).
    boolean hung;
    boolean hangDisturbs;
    // Failed since its last list (from brokenAt): its next list is one after a failure, which the checks time.
    boolean failedSinceList;
    long brokenAt;
    // Its informer's back-off: the wait before its next try, and whether one is scheduled.
    long backoffNanos;
    boolean retryScheduled;
    // Since its last list: whether its sink heard of a failure, when the server first answered a Lease call of the
    // replica's after that (-1: not yet), and whether a relist the runner asked for failed (the server unreachable).
    boolean failureReported;
    long answeredAt = -1;
    boolean earlyRelistFailed;
    // Its lists: how many arrived (a later one drops what an earlier one has not reported yet, as a replaced
    // informer reports nothing more), whether one was reported in whole (listed), and the Leases of the one being
    // reported, with those not reported yet.
    int lists;
    boolean listedOnce;
    Map<String, ShardSimServer.Stored> listing = Map.of();
    final java.util.Set<String> unreported = new java.util.HashSet<>();

    ViewConnection(ShardSimReplica replica, int process, ShardLeaseSource.Sink sink) {
      this.replica = replica;
      this.process = process;
      this.sink = sink;
    }
  }

  /**
   * The first list of a replica's list and watch while it is being reported: every Lease it lists, and the names of
   * those not reported yet.
   */
  record FirstList(Map<String, ShardSimServer.Stored> leases, java.util.Set<String> unreported) {}

  /** What a run gives back. */
  record Result(Config config, ShardSimChecks checks, long replicaSteps) {}

  private final Config config;
  private final SplittableRandom random;
  private final SplittableRandom faults;
  // The informers' executors' pace (its own stream: the network's and the faults' draws stay as they were).
  private final SplittableRandom lists;
  // The lists left unanswered (their own stream, for the same reason: ShardSimFaults.scheduleUnansweredLists).
  private final SplittableRandom unanswered;
  private final SimNetwork network;
  private final ShardSimServer server;
  private final ShardSimChecks checks;
  private final List<ShardSimReplica> replicas = new ArrayList<>();
  private final Map<String, List<LeaseWatch>> leaseWatches = new HashMap<>();
  private final List<ViewConnection> views = new ArrayList<>();
  // By slot: how much later than the network's own latency its list and watch's events arrive (a lagging watch).
  private final long[] viewLagNanos = new long[SLOTS];
  // By slot: the fault windows in which each list its list and watch sends is left unanswered.
  private final int[] listsUnanswered = new int[SLOTS];
  private final PriorityQueue<Event> queue =
      new PriorityQueue<>(Comparator.comparingLong(Event::time).thenComparingLong(Event::seq));
  private Consumer<ShardSim> script;
  private long now;
  private long seq;
  private long steps;

  private ShardSim(Config config) {
    this.config = config;
    this.random = new SplittableRandom(config.seed());
    this.faults = new SplittableRandom(config.seed() ^ 0x9E3779B97F4A7C15L);
    this.lists = new SplittableRandom(config.seed() ^ 0x5DEECE66DL);
    this.unanswered = new SplittableRandom(config.seed() ^ 0x2545F4914F6CDD1DL);
    this.network = new SimNetwork(random, config.maxLatencyMillis() * 1_000_000L, SLOTS);
    this.server = new ShardSimServer(new ShardSimServer.Changes() {
      @Override
      public void changed(ShardSimServer.Stored stored) {
        ShardSim.this.changed(stored);
      }

      @Override
      public void deleted(ShardSimServer.Stored removed, long version) {
        ShardSim.this.deleted(removed, version);
      }
    });
    this.checks = new ShardSimChecks(this);
    for (int i = 0; i < SLOTS; i++) {
      replicas.add(new ShardSimReplica(this, i));
    }
  }

  /** The parameters of the run {@code seed}: 2 to 6 replicas, 1 to 64 shards, leases of 1 to 3 s. */
  static Config config(long seed, ShardCoordinator.Flaw flaw, ShardDriverFlaw driverFlaw) {
    SplittableRandom r = new SplittableRandom(seed * 31 + 7);
    int[] counts = {1, 2, 3, 5, 8, 16, 16, 32, 64};
    int shards = counts[r.nextInt(counts.length)];
    int lease = 1 + r.nextInt(3);
    long renew = lease * 1000L * (60 + r.nextInt(21)) / 100;
    long retry = Math.max(100, renew * (15 + r.nextInt(20)) / 100);
    long timeout = Math.max(100, renew / 3);
    long faultEnd = (10 + r.nextInt(21)) * 1_000_000_000L;
    long end = faultEnd + ShardSimChecks.fairnessBoundNanos(lease * 1_000_000_000L, retry * 1_000_000L)
        + 3_000_000_000L;
    return new Config(seed, 2 + r.nextInt(5), shards, lease, renew, retry, timeout, 2000, 1 + r.nextInt(30),
        faultEnd, end, (int) (faultEnd / 1_000_000_000L) * (1 + r.nextInt(3)) / 2, r.nextInt(3) == 0,
        stopSlots(seed), flaw, driverFlaw);
  }

  /**
   * The replica slots of the run {@code seed} whose loss policy stops the replica (see {@link Config#onLoss}): each
   * slot one time in four, drawn from a stream of its own, so that every other parameter of a seed stays as it was.
   */
  static int stopSlots(long seed) {
    SplittableRandom r = new SplittableRandom(seed ^ 0x6A09E667F3BCC909L);
    int slots = 0;
    for (int slot = 0; slot < SLOTS; slot++) {
      slots |= r.nextInt(4) == 0 ? 1 << slot : 0;
    }
    return slots;
  }

  static Result run(Config config) {
    return run(config, null);
  }

  /** A run with the faults of {@code script} (scheduled by it, from time 0) instead of those drawn from the seed. */
  static Result run(Config config, Consumer<ShardSim> script) {
    ShardSim sim = new ShardSim(config);
    sim.script = script;
    sim.play();
    return new Result(config, sim.checks, sim.steps);
  }

  Config config() {
    return config;
  }

  SplittableRandom random() {
    return random;
  }

  ShardSimChecks checks() {
    return checks;
  }

  List<ShardSimReplica> replicas() {
    return replicas;
  }

  long now() {
    return now;
  }

  /** The longest a callback waits for its pool thread ({@link #callbackDelay}), outside the fault phase's hung ones. */
  static final long MAX_CALLBACK_DELAY_NANOS = 300_000_000L;

  /** How long a callback waits for its pool thread (its work runs on meanwhile): mostly at once, now and then long. */
  long callbackDelay() {
    int pick = random.nextInt(1000);
    return pick < 900 ? random.nextLong(2_000_000L) : pick < 990 ? random.nextLong(50_000_000L)
        : random.nextLong(MAX_CALLBACK_DELAY_NANOS);
  }

  /** In the fault phase, 2 % of callbacks outlive the stop timeout (a hung stop: its runner leaves the Lease). */
  long hungDelay() {
    return now < config.faultEndNanos() && random.nextInt(50) == 0
        ? config.stopTimeoutMillis() * 1_000_000L + random.nextLong(3 * config.leaseNanos()) : -1;
  }

  void trace(java.util.function.Supplier<String> line) {
    if (TRACE) {
      System.out.printf("%10.3f %s%n", now / 1e6, line.get());
    }
  }

  // ---- the event queue -------------------------------------------------------------------------------------

  void at(long time, Runnable action) {
    queue.add(new Event(Math.max(time, now), seq++, null, 0, action));
  }

  void at(long time, ShardSimReplica replica, Runnable action) {
    at(time, replica, replica.process, action);
  }

  void at(long time, ShardSimReplica replica, int process, Runnable action) {
    queue.add(new Event(Math.max(time, now), seq++, replica, process, action));
  }

  private void play() {
    for (int i = 0; i < config.initial(); i++) {
      ShardSimReplica replica = replicas.get(i);
      replica.pendingStart = true;
      at(random.nextLong(300_000_000L), () -> {
        if (!replica.alive) {
          replica.startProcess();
        }
      });
    }
    if (script == null) {
      ShardSimFaults.schedule(this, faults);
      ShardSimFaults.scheduleUnansweredLists(this, unanswered);
    } else {
      script.accept(this);
    }
    at(0, this::probe);
    while (!queue.isEmpty()) {
      Event event = queue.poll();
      // A run lasts until its fair share was checked for 3 s (the check is due later after a late hung callback).
      if (event.time() > Math.max(config.endNanos(), checks.fairnessDueNanos() + 3_000_000_000L)) {
        break;
      }
      now = event.time();
      dispatch(event);
    }
    checks.end();
  }

  void dispatch(Event event) {
    ShardSimReplica replica = event.replica();
    if (replica != null) {
      if (!replica.alive || replica.process != event.process()) {
        return;
      }
      if (replica.paused) {
        replica.deferred.add(event);
        return;
      }
      steps++;
    }
    event.action().run();
  }

  /** Every 20 ms: the invariants that need time to pass, and the processes whose runner stopped. */
  private void probe() {
    for (ShardSimReplica r : replicas) {
      if (r.alive && !r.paused && r.runner != null && r.runner.isStopped()) {
        if (!r.closing && r.lossStopAt >= 0) {
          // Stopped after its loss policy said not to contend again: its main may linger a while before it exits
          // (up to half a lease duration), each probe checking the stopped replica (ShardSimChecks#probe).
          if (r.lingerUntil < 0) {
            r.lingerUntil = now + random.nextLong(config.leaseNanos() / 2);
            checks.lossStopped(r);
          }
          if (now < r.lingerUntil) {
            continue;
          }
        }
        boolean closed = r.closing;
        if (closed) {
          checks.closedReplicaStopped(r);
        }
        long restart = r.restartAfterClose;
        boolean fresh = r.newIdentityAfterClose;
        r.die();
        if (!closed) {
          restartLater(r, config.leaseNanos(), false); // it stopped on its own: its main exits, the pod restarts
        } else if (restart >= 0) {
          restartLater(r, restart, fresh);
        }
      }
    }
    checks.probe(now);
    if (TRACE && now % 1_000_000_000L < 20_000_000L) {
      for (ShardSimReplica r : replicas) {
        if (r.alive && r.runner != null) {
          trace(() -> "state " + r + " " + coordinatorOf(r.runner));
        }
      }
    }
    at(now + 20_000_000L, this::probe);
  }

  /** The coordinator's own account of itself, for the journal. */
  private static String coordinatorOf(ShardedRunner runner) {
    try {
      java.lang.reflect.Field parts = ShardedRunner.class.getDeclaredField("parts");
      parts.setAccessible(true);
      ShardDriver driver = ((ShardAssembly.Parts) parts.get(runner)).driver();
      java.lang.reflect.Field coordinator = ShardDriver.class.getDeclaredField("coordinator");
      coordinator.setAccessible(true);
      java.lang.reflect.Field view = ShardDriver.class.getDeclaredField("view");
      view.setAccessible(true);
      java.lang.reflect.Field ticker = ShardDriver.class.getDeclaredField("ticker");
      ticker.setAccessible(true);
      return coordinator.get(driver) + " view " + ((ShardLeaseView) view.get(driver)).view(((Ticker) ticker.get(driver))
          .read());
    } catch (ReflectiveOperationException e) {
      return e.toString();
    }
  }

  void restartLater(ShardSimReplica replica, long afterNanos, boolean newIdentity) {
    at(now + afterNanos, () -> {
      if (!replica.alive) {
        if (newIdentity) {
          replica.generation++;
          replica.identity = "replica-" + replica.slot + "-" + replica.generation;
        }
        replica.startProcess();
      }
    });
  }

  void pause(ShardSimReplica replica, long forNanos) {
    if (!replica.alive || replica.paused) {
      return;
    }
    replica.paused = true;
    checks.paused(replica);
    int p = replica.process;
    at(now + forNanos, () -> {
      if (replica.alive && replica.process == p) {
        replica.paused = false;
        replica.resumedAt = now;
        List<Event> held = replica.deferred;
        replica.deferred = new ArrayList<>();
        held.forEach(this::dispatch);
      }
      checks.disturbance(-1);
    });
  }

  // ---- the network and the server --------------------------------------------------------------------------

  /** A Lease call: over the network to the server and back, either leg lost as the network says. */
  void request(ShardSimReplica replica, Function<ShardSimServer, Answer> call, Consumer<Answer> answered) {
    long up = network.up(replica.slot);
    if (up < 0) {
      return; // lost: the runner's own timeout ends the call
    }
    int p = replica.process;
    at(now + up, () -> {
      Answer answer = network.serverDown() ? new Answer.Failed(FailureKind.OTHER, "503 ServiceUnavailable")
          : call.apply(server);
      long down = network.down(replica.slot);
      if (down >= 0) {
        at(now + down, replica, p, () -> answered.accept(answer));
      }
    });
  }

  LeaseWatch openLeaseWatch(ShardSimReplica replica, String lease, LeaseTransport.WatchEvents events) {
    LeaseWatch watch = new LeaseWatch(replica, lease, events);
    leaseWatches.computeIfAbsent(lease, k -> new ArrayList<>()).add(watch);
    if (network.watchCut(replica.slot)) {
      breakWatch(watch);
    } else {
      watch.last = now + 1 + random.nextLong(config.maxLatencyMillis() * 1_000_000L);
      at(watch.last, replica, watch.process, () -> {
        if (watch.open) {
          events.opened();
        }
      });
    }
    return watch;
  }

  void closeLeaseWatch(LeaseWatch watch) {
    watch.open = false;
    List<LeaseWatch> of = leaseWatches.get(watch.lease);
    if (of != null) {
      of.remove(watch);
    }
  }

  private void breakWatch(LeaseWatch watch) {
    closeLeaseWatch(watch);
    at(now + 1 + random.nextLong(config.timeoutMillis() * 1_000_000L), watch.replica, watch.process,
        watch.events::closed);
  }

  /**
   * Opens a replica's list and watch by label: a first list, then every change, re-listed after a break (each break
   * reported to the sink as its informer's failure), at the informer's next try ({@link #scheduleRetry}:
   * production's back-off) or at once when the runner asks for it ({@link ShardViewSource.View#relist}: the production
   * {@link ShardViewFeed} does, at the first answer of the server after a failure).
   */
  ShardViewSource.View openView(ShardSimReplica replica, int process, ShardLeaseSource.Sink sink) {
    ViewConnection view = new ViewConnection(replica, process, sink);
    views.add(view);
    if (network.watchCut(replica.slot) || network.serverDown()) {
      breakView(view); // the first list comes once the server can be reached, as a re-list does
    } else {
      relist(view);
    }
    return new ShardViewSource.View() {
      @Override
      public void close() {
        view.open = false;
        views.remove(view);
        undisturb(view);
      }

      @Override
      public boolean relist() {
        return relistNow(view);
      }

      @Override
      public boolean restart() {
        if (!view.open) {
          return false;
        }
        if (view.broken) {
          checks.viewRestarts++;
          return relistNow(view);
        }
        // A new list and watch beside one that is not broken: the runner took its silence for a dead one.
        checks.viewRestarts++;
        ShardSim.this.relist(view);
        return true;
      }
    };
  }

  /** The list and watch broke (or its list failed): its informer backs off, and its sink hears of the failure. */
  private void breakView(ViewConnection view) {
    if (!view.failedSinceList) {
      view.failedSinceList = true;
      view.brokenAt = now;
    }
    view.broken = true;
    view.hung = false; // a failure: the informer's back-off takes over
    scheduleRetry(view);
    // After a list already on its way (it lands, then the watch fails).
    at(Math.max(now, view.last), view.replica, view.process, () -> {
      if (view.open) {
        view.failureReported = true;
        view.sink.failed();
      }
    });
  }

  /**
   * The server answered a Lease call of {@code replica}'s (not a failure: a read, a write, a 409, a 404): the first
   * such answer after its list and watch's sink heard of a failure, which the runner lists again at.
   */
  void answered(ShardSimReplica replica) {
    for (ViewConnection view : views) {
      if (view.replica == replica && view.process == replica.process && view.failureReported && view.answeredAt < 0) {
        view.answeredAt = now;
      }
    }
  }

  /**
   * A relist the runner asked for: lists at once if the list and watch is broken; if the server cannot be reached,
   * that list fails (a failure the sink hears of) and the informer's own retry lists later.
   */
  private boolean relistNow(ViewConnection view) {
    // A list left unanswered is no watch either: production's relist replaces an informer that is not watching.
    if (!view.open || !(view.broken || view.hung)) {
      return false;
    }
    if (network.watchCut(view.replica.slot) || network.serverDown()) {
      view.earlyRelistFailed = true;
      breakView(view);
    } else {
      relist(view);
    }
    return true;
  }

  void closeWatches(ShardSimReplica replica) {
    views.removeIf(v -> {
      if (v.replica == replica) {
        v.open = false;
        undisturb(v);
        return true;
      }
      return false;
    });
    for (List<LeaseWatch> of : leaseWatches.values()) {
      of.removeIf(w -> {
        if (w.replica == replica) {
          w.open = false;
          return true;
        }
        return false;
      });
    }
  }

  private void changed(ShardSimServer.Stored stored) {
    trace(() -> "server " + stored.name() + " " + stored.record().holder() + " t" + stored.record().leaseTransitions()
        + (stored.leaving() ? " leaving" : "") + " rv" + stored.version());
    checks.leaseChanged(stored);
    List<LeaseWatch> of = leaseWatches.get(stored.name());
    if (of != null) {
      for (LeaseWatch watch : new ArrayList<>(of)) {
        if (network.watchCut(watch.replica.slot)) {
          breakWatch(watch);
        } else if (!network.dropEvent()) {
          watch.last = Math.max(watch.last, now + network.down(watch.replica.slot) + network.eventDelay());
          LeaseRecord record = stored.record();
          at(watch.last, watch.replica, watch.process, () -> {
            if (watch.open) {
              watch.events.changed(record);
            }
          });
        }
      }
    }
    for (ViewConnection view : views) {
      if (view.broken || view.hung) {
        continue;
      }
      if (network.watchCut(view.replica.slot)) {
        breakView(view);
        continue;
      }
      view.last = Math.max(view.last, now + network.down(view.replica.slot) + network.eventDelay()
          + viewLagNanos[view.replica.slot]);
      at(view.last, view.replica, view.process, () -> deliver(view, stored));
    }
  }

  /** A deletion goes to the Lease's watches (a null record, as fabric8 reports a DELETED event) and to the views. */
  private void deleted(ShardSimServer.Stored removed, long version) {
    trace(() -> "server " + removed.name() + " deleted rv" + version);
    List<LeaseWatch> of = leaseWatches.get(removed.name());
    if (of != null) {
      for (LeaseWatch watch : new ArrayList<>(of)) {
        if (network.watchCut(watch.replica.slot)) {
          breakWatch(watch);
        } else if (!network.dropEvent()) {
          watch.last = Math.max(watch.last, now + network.down(watch.replica.slot) + network.eventDelay());
          at(watch.last, watch.replica, watch.process, () -> {
            if (watch.open) {
              watch.events.changed(null);
            }
          });
        }
      }
    }
    for (ViewConnection view : views) {
      if (view.broken || view.hung) {
        continue;
      }
      if (network.watchCut(view.replica.slot)) {
        breakView(view);
        continue;
      }
      view.last = Math.max(view.last, now + network.down(view.replica.slot) + network.eventDelay()
          + viewLagNanos[view.replica.slot]);
      at(view.last, view.replica, view.process, () -> deliverDeleted(view, removed.name(), version));
    }
  }

  private void deliverDeleted(ViewConnection view, String name, long version) {
    Long cached = view.cache.get(name);
    if (view.open && cached != null && cached < version) {
      view.cache.put(name, version); // a tombstone: an older event of the Lease, if one still comes, is dropped
      view.sink.deleted(name, view.replica.ticker().read());
    }
  }

  private void deliver(ViewConnection view, ShardSimServer.Stored stored) {
    if (view.open && view.cache.getOrDefault(stored.name(), -1L) < stored.version()) {
      view.cache.put(stored.name(), stored.version());
      view.sink.changed(stored.listed(), view.replica.ticker().read());
    }
  }

  /**
   * The first interval of a list and watch's back-off, as production's ({@link ShardLeaseSource#reconnectMillis}: a
   * 32nd of the retry period, at least 1 ms), doubling at each failure in a row up to 32 times that.
   */
  long firstBackoffNanos() {
    return ShardLeaseSource.reconnectMillis(java.time.Duration.ofMillis(config.retryMillis())) * 1_000_000L;
  }

  /** The longest a list and watch waits between two tries: its back-off's cap, about the retry period. */
  long backoffCapNanos() {
    return firstBackoffNanos() * ShardLeaseSource.BACKOFF_CAP_FACTOR;
  }

  /** The informer tries again after its back-off: it lists if it can reach the server, or fails once more. */
  private void scheduleRetry(ViewConnection view) {
    if (view.retryScheduled) {
      return;
    }
    view.retryScheduled = true;
    long wait = view.backoffNanos == 0 ? firstBackoffNanos() : view.backoffNanos;
    view.backoffNanos = Math.min(2 * wait, backoffCapNanos());
    at(now + wait, view.replica, view.process, () -> {
      view.retryScheduled = false;
      if (view.open && view.broken) {
        if (network.watchCut(view.replica.slot) || network.serverDown()) {
          breakView(view);
        } else {
          relist(view);
        }
      }
    });
  }

  private void relist(ViewConnection view) {
    view.broken = false;
    boolean afterFailure = view.failedSinceList;
    long brokenAt = view.brokenAt;
    long answeredAt = view.earlyRelistFailed ? -1 : view.answeredAt;
    view.failedSinceList = false;
    view.failureReported = false;
    view.answeredAt = -1;
    view.earlyRelistFailed = false;
    if (listsUnanswered[view.replica.slot] > 0) {
      // Sent, and never answered: fabric8 neither fails it nor tries again, and opens no watch after it. A list of an
      // earlier informer still being reported stops (a replaced informer reports nothing more).
      view.lists++;
      view.listing = Map.of();
      view.unreported.clear();
      view.hung = true;
      if (!view.hangDisturbs) {
        view.hangDisturbs = true;
        checks.disturbance(1);
      }
      checks.unansweredLists++;
      trace(() -> view.replica + "'s list of the Leases left unanswered");
      return;
    }
    view.hung = false;
    view.last = Math.max(view.last, now + network.down(view.replica.slot));
    at(view.last, view.replica, view.process, () -> list(view, afterFailure, brokenAt, answeredAt));
  }

  /**
   * From now, every list {@code replica}'s list and watch sends is left unanswered, until as many calls with {@code
   * -1}; at the first, its watch is dropped too (its informer then lists again, into the window).
   */
  void unansweredLists(ShardSimReplica replica, int delta) {
    listsUnanswered[replica.slot] += delta;
    if (delta > 0) {
      for (ViewConnection view : new ArrayList<>(views)) {
        if (view.replica == replica && view.process == replica.process && view.open && !view.broken) {
          breakView(view);
        }
      }
    }
  }

  /** A view whose list was left unanswered listed in whole, or closed: it disturbs the checks no more. */
  private void undisturb(ViewConnection view) {
    view.hung = false;
    if (view.hangDisturbs) {
      view.hangDisturbs = false;
      checks.disturbance(-1);
    }
  }

  /** The pace of an informer's executor handing a list's Leases to the handler: up to 50 µs apart. */
  static final long LIST_ITEM_NANOS = 50_000L;

  /**
   * A list arrived; it is reported as production's {@link ShardLeaseSource} reports a fabric8 informer's: each Lease
   * that changed since the view last heard of it in a step of its own (the informer's executor hands them to the
   * handler one at a time, up to {@link #LIST_ITEM_NANOS} apart, in one list in four after a stall of up to one leg's
   * latency at one of them), in the API server's order (by name: the members' Leases before the shards'), then the
   * deletions of the Leases the list no longer has; {@link ShardLeaseSource.Sink#listed} right after the last Lease
   * of the list was reported, before or after those deletions (their events are no part of it). Each step is an
   * event of the replica's process, so the other replicas' steps and its own loop's run between them. A list that
   * arrives while an earlier one is being reported stops that one (a replaced informer reports nothing more): it
   * reports all that changed since what was reported.
   */
  private void list(ViewConnection view, boolean afterFailure, long brokenAt, long answeredAt) {
    int list = ++view.lists;
    long arrivedAt = now;
    List<ShardSimServer.Stored> changed = new ArrayList<>();
    for (ShardSimServer.Stored stored : server.all().values()) {
      if (view.cache.getOrDefault(stored.name(), -1L) < stored.version()) {
        changed.add(stored);
      }
    }
    view.listing = view.listedOnce ? Map.of() : Map.copyOf(server.all());
    view.unreported.clear();
    changed.forEach(stored -> view.unreported.add(stored.name()));
    List<Runnable> steps = new ArrayList<>();
    changed.forEach(stored -> steps.add(() -> {
      view.unreported.remove(stored.name());
      deliver(view, stored);
    }));
    // A re-list no longer shows a Lease deleted meanwhile: fabric8's informer reports it deleted.
    List<Runnable> deletions = new ArrayList<>();
    server.tombstones().forEach((name, version) -> {
      if (view.cache.getOrDefault(name, version) < version) {
        deletions.add(() -> deliverDeleted(view, name, version));
      }
    });
    int listedAt = steps.size() + (deletions.isEmpty() ? 0 : lists.nextInt(deletions.size() + 1));
    steps.addAll(deletions);
    steps.add(listedAt, () -> listed(view, afterFailure, brokenAt, answeredAt, arrivedAt));
    int stallAt = lists.nextInt(4) == 0 ? lists.nextInt(steps.size()) : -1;
    long at = now;
    for (int i = 0; i < steps.size(); i++) {
      if (i > 0 && i != listedAt) {
        at += lists.nextLong(LIST_ITEM_NANOS);
      }
      if (i == stallAt) {
        at += lists.nextLong(config.maxLatencyMillis() * 1_000_000L);
      }
      Runnable step = steps.get(i);
      at(at, view.replica, view.process, () -> {
        if (view.open && view.lists == list) {
          step.run();
        }
      });
    }
    view.last = Math.max(view.last, at); // the watch's events come after the list's, on the same executor
  }

  private void listed(ViewConnection view, boolean afterFailure, long brokenAt, long answeredAt, long arrivedAt) {
    view.backoffNanos = 0; // a list and watch that opened starts its back-off again from its first interval
    view.listedOnce = true;
    view.listing = Map.of();
    undisturb(view);
    if (afterFailure) {
      checks.listedAfterFailure(view.replica, brokenAt, answeredAt, arrivedAt);
    }
    view.sink.listed();
  }

  /** The first list of {@code replica}'s list and watch while it is being reported, or null. */
  FirstList firstListInProgress(ShardSimReplica replica) {
    for (ViewConnection view : views) {
      if (view.replica == replica && view.process == replica.process && view.open && !view.listedOnce
          && !view.listing.isEmpty()) {
        return new FirstList(view.listing, java.util.Set.copyOf(view.unreported));
      }
    }
    return null;
  }

  /**
   * From now, every event of {@code replica}'s list and watch arrives {@code lagNanos} later than the network alone
   * would bring it (a watch that lags behind the replica's own calls, which are answered as before); 0 ends it.
   */
  void lagView(ShardSimReplica replica, long lagNanos) {
    viewLagNanos[replica.slot] = lagNanos;
  }

  /** The simulated API server, for the checks that read what it stores. */
  ShardSimServer server() {
    return server;
  }

  SimNetwork network() {
    return network;
  }
}
