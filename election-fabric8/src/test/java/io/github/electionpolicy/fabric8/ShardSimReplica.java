package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * One replica slot of the sharding simulation: a process running the real {@link ShardedRunner}, built through its
 * package-private seams (this process's loop, user-code executor, ticker and wall clock, a simulated {@link
 * LeaseTransport} under the production {@link LifecycleDriver} of each Lease, and the list and watch by label as a
 * {@link ShardViewSource}), as {@link SimReplica} drives one {@link ElectionRunner}. Every loop task, timer and
 * callback run is an event of this process (dropped once it died, held while it is paused). The slot keeps its
 * index on the {@link SimNetwork}; a rolling update gives it a new identity, a restart keeps it.
 *
 * <p>Not thread-safe (the simulation's one thread).
 */
final class ShardSimReplica {

  /**
   * Whether the replicas run the RBAC preflight (production's default; its one round trip is on the start's path:
   * the list and watch opens once it granted). {@code -Dsharding.preflight=false} runs them without, as before.
   */
  static final boolean PREFLIGHT = Boolean.parseBoolean(System.getProperty("sharding.preflight", "true"));

  private static final java.util.regex.Pattern SERVICES_LANE =
      java.util.regex.Pattern.compile("election-services\\[.*-shard-(\\d+):");

  final ShardSim sim;
  final int slot;
  int generation;
  String identity;
  // `process` numbers incarnations: events of a dead one are dropped.
  int process;
  boolean alive;
  boolean paused;
  boolean closing;
  /** A replacement to start once this process stopped after its close (a rolling update), or -1. */
  long restartAfterClose = -1;
  boolean newIdentityAfterClose;
  /** A start is on its way (after a crash, or a scale-up): no other fault starts it meanwhile. */
  boolean pendingStart;
  /**
   * When this process's loss policy last said not to contend again (a handler's STOP, an exiter that returned), or
   * -1; and, once its runner stopped after that, until when the process lingers before its main exits.
   */
  long lossStopAt = -1;
  long lingerUntil = -1;
  /** When this process last resumed from a pause, or -1; whether it overran the bound of its leave after a loss. */
  long resumedAt = -1;
  boolean leaveLate;
  List<ShardSim.Event> deferred = new ArrayList<>();
  /** A scripted run's slow user code: each callback of this replica's waits this long for its thread; -1: drawn. */
  long callbackDelayNanos = -1;
  /** A scripted run's late answers: each answer to a write of its membership Lease reaches it this much later; 0: none. */
  long membershipAnswerDelayNanos;
  SimClock clock;
  ShardedRunner runner;

  ShardSimReplica(ShardSim sim, int slot) {
    this.sim = sim;
    this.slot = slot;
    this.identity = "replica-" + slot;
  }

  // ---- the process ---------------------------------------------------------------------------------------

  void startProcess() {
    process++;
    alive = true;
    paused = false;
    closing = false;
    pendingStart = false;
    restartAfterClose = -1;
    lossStopAt = -1;
    lingerUntil = -1;
    resumedAt = -1;
    leaveLate = false;
    deferred = new ArrayList<>();
    sim.checks().processStarted(this);
    clock = new SimClock(sim.now(), sim.random().nextLong(), sim.random().nextLong(-1000, 1001),
        sim.random().nextLong(-3_600_000L, 3_600_001L) * 1_000_000L);
    int p = process;
    ShardSim.Config c = sim.config();
    LeaseSettings settings = LeaseSettings.builder()
        .leaseName(ShardSim.LEASE)
        .namespace(ShardSim.NAMESPACE)
        .identity(identity)
        .leaseDuration(Duration.ofSeconds(c.leaseSeconds()))
        .renewDeadline(Duration.ofMillis(c.renewMillis()))
        .retryPeriod(Duration.ofMillis(c.retryMillis()))
        .requestTimeout(Duration.ofMillis(c.timeoutMillis()))
        .stopTimeout(Duration.ofMillis(c.stopTimeoutMillis()))
        // A lost shard: its main exits (the process dies, the pod restarts under the same identity), it contends, or
        // the replica stops (a handler's STOP, or an exiter that returns): it leaves, then its main exits.
        .lossPolicy(switch (c.onLoss(slot)) {
          case EXIT -> LossPolicy.exit(status -> exited(p));
          case EXIT_RETURNS -> LossPolicy.exit(status -> lossStop(p));
          case STOP -> LossPolicy.custom(lostTerm -> {
            lossStop(p);
            return LossHandler.AfterLoss.STOP;
          });
          case RECONTEND -> LossPolicy.recontend();
        })
        .build();
    Ticker ticker = ticker();
    Clock wall = wallClock();
    ShardAssembly.Transports transports = leaseSettings -> {
      String lease = leaseSettings.leaseName();
      Transport transport = new Transport(p, lease, ShardSim.LEASE.equals(lease) ? false
          : new ShardLeases(ShardSim.LEASE, c.shards()).parse(lease) instanceof ShardLeases.Kind.Member);
      if (transport.membership) {
        membershipTransport = transport;
      } else if (new ShardLeases(ShardSim.LEASE, c.shards()).parse(lease) instanceof ShardLeases.Kind.Shard shard) {
        sim.checks().contends(this, shard.shard()); // a shard runner is made as its replica starts to contend
      }
      return new ShardAssembly.Opened(transport, (labels, annotations) -> transport.annotate(annotations));
    };
    runner = ShardedRunner.builder()
        .decide(ElectionPolicy.defaults(), Environment.of(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1")),
            Substrate.usingKubernetesApi("kubernetes"))
        .settings(settings)
        .shards(c.shards())
        .service(new Work(p))
        .rbacPreflight(PREFLIGHT)
        .ticker(ticker)
        .clock(wall)
        .loop(new Loop(p))
        .userCode(new UserCode(p))
        .transports(transports)
        .source(sink -> sim.openView(this, p, sink))
        .flaw(c.flaw())
        .driverFlaw(c.driverFlaw())
        .start();
  }

  // The membership Lease's transport of the current process.
  private Transport membershipTransport;

  /** The process is gone (a crash, or its end after it stopped): nothing of it runs any more. */
  void die() {
    if (!alive) {
      return;
    }
    alive = false;
    paused = false;
    deferred = new ArrayList<>();
    sim.checks().processDied(this);
    sim.closeWatches(this);
    process++;
    runner = null;
  }

  /** The exit policy's exiter: the process ends at once, and its pod restarts it a lease duration later. */
  private void exited(int p) {
    if (process == p && alive) {
      die();
      sim.restartLater(this, sim.config().leaseNanos(), false);
    }
  }

  /** The loss policy said not to contend again: the replica must leave (an exiter that returns, or STOP). */
  private void lossStop(int p) {
    if (process == p && alive) {
      sim.checks().lossStop(this);
    }
  }

  /**
   * After this process stopped: whether its membership Lease is still on the server exactly as its own release
   * wrote it, with no delete sent (a release after a loss is not followed by one; a clean close's always is).
   */
  boolean membershipLeftAsReleased() {
    Transport t = membershipTransport;
    if (t == null || t.releasedVersion == null || t.deleteSent) {
      return false;
    }
    ShardSimServer.Stored stored = sim.server().stored(t.lease);
    return stored != null && t.releasedVersion.equals(stored.record().resourceVersion());
  }

  /** Whether this process's membership runner sent a delete of its Lease. */
  boolean membershipDeleteSent() {
    return membershipTransport != null && membershipTransport.deleteSent;
  }

  void close() {
    if (alive && !closing) {
      closing = true;
      runner.requestClose();
    }
  }

  Ticker ticker() {
    SimClock mine = clock;
    return () -> mine.mono(sim.now());
  }

  private Clock wallClock() {
    SimClock mine = clock;
    return new Clock() {
      @Override
      public ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        return mine.wall(sim.now());
      }
    };
  }

  @Override
  public String toString() {
    return identity + "/p" + process;
  }

  // ---- the seams -------------------------------------------------------------------------------------------

  /** The shared loop of this process: each task an event, each timer on the process's own monotonic clock. */
  private final class Loop implements RunnerLoop {
    private final int p;

    Loop(int p) {
      this.p = p;
    }

    @Override
    public void execute(Runnable task) {
      if (process == p) {
        sim.at(sim.now(), ShardSimReplica.this, task);
      }
    }

    @Override
    public Timer schedule(long delayNanos, Runnable task) {
      if (process != p) {
        return () -> { };
      }
      boolean[] cancelled = {false};
      long at = clock.trueTimeOf(clock.mono(sim.now()) + Math.max(0, delayNanos), sim.now());
      sim.at(at, ShardSimReplica.this, () -> {
        if (!cancelled[0]) {
          cancelled[0] = true;
          task.run();
        }
      });
      return () -> cancelled[0] = true;
    }

    @Override
    public boolean inLoop() {
      return true;
    }

    @Override
    public Executor logWriter() {
      return Runnable::run;
    }
  }

  /**
   * User code: each run an event of this process, a little later (the pool's thread picks it up; now and then a
   * callback waits longer, as a slow stop does), never before the lane's previous run (a lane is one thread).
   */
  private final class UserCode implements Executor {
    private final int p;
    private final Map<Object, Long> laneFreeAt = new HashMap<>();
    private final Map<Object, Integer> laneShards = new HashMap<>();

    UserCode(int p) {
      this.p = p;
    }

    @Override
    public void execute(Runnable run) {
      if (process != p) {
        return;
      }
      Object lane = run instanceof CallbackLane.Run laneRun ? laneRun.lane() : run;
      long hung = sim.hungDelay();
      // This lane's next callback (a shard's stop, or its start) may wait past the stop timeout: the shard's work,
      // if it runs, may then outlive its Lease, which fencing guards, as it does a paused process's.
      int laneShard = laneShards.computeIfAbsent(lane, ShardSimReplica::shardOf);
      int shard = hung < 0 ? -1 : laneShard;
      long delay = callbackDelayNanos >= 0 ? callbackDelayNanos : sim.callbackDelay();
      long at = Math.max(sim.now() + (shard >= 0 ? hung : delay), laneFreeAt.getOrDefault(lane, 0L));
      if (shard >= 0) {
        sim.checks().hung(ShardSimReplica.this, shard, at);
      }
      laneFreeAt.put(lane, at);
      // A shard's callback waiting for its pool thread: the ownership-gap bounds leave out that wait.
      ShardSimChecks.Queued queued = laneShard < 0 ? null
          : sim.checks().callbackQueued(ShardSimReplica.this, laneShard);
      sim.at(at, ShardSimReplica.this, queued == null ? run : () -> {
        sim.checks().callbackRuns(queued);
        try {
          run.run();
        } finally {
          sim.checks().callbackRan(queued);
        }
      });
    }
  }

  /** The shard whose runner a callback lane is, from its thread name ({@code <lease>-shard-<i>:<identity>}), or -1. */
  private static int shardOf(Object lane) {
    try {
      java.lang.reflect.Field name = CallbackLane.class.getDeclaredField("threadName");
      name.setAccessible(true);
      java.util.regex.Matcher m = SERVICES_LANE.matcher((String) name.get(lane));
      return m.find() ? Integer.parseInt(m.group(1)) : -1;
    } catch (ReflectiveOperationException | ClassCastException e) {
      return -1;
    }
  }

  /** The work of one shard in this process: what the invariants watch. */
  private final class Work implements ShardService {
    private final int p;

    Work(int p) {
      this.p = p;
    }

    @Override
    public void start(int shard, LeadershipTerm term) {
      if (process == p) {
        sim.checks().workStarted(ShardSimReplica.this, shard, term);
      }
    }

    @Override
    public void stop(int shard) {
      if (process == p) {
        sim.checks().workStopped(ShardSimReplica.this, shard);
      }
    }
  }

  /** The calls of one Lease's runner over the simulated network; its follower's watch at the simulated server. */
  private final class Transport implements LeaseTransport {
    private final int p;
    private final String lease;
    private final boolean membership;
    // The resourceVersion of this runner's last release as the server stored it, and whether it sent a delete.
    private String releasedVersion;
    private boolean deleteSent;
    private Map<String, String> annotations = Map.of();
    private boolean closed;
    private final List<ShardSim.LeaseWatch> watches = new ArrayList<>();

    Transport(int p, String lease, boolean membership) {
      this.p = p;
      this.lease = lease;
      this.membership = membership;
    }

    void annotate(Map<String, String> next) {
      annotations = Map.copyOf(next);
    }

    @Override
    public Call read(Answered done) {
      sim.trace(() -> ShardSimReplica.this + " reads " + lease);
      return send(server -> server.get(lease), done);
    }

    @Override
    public Call create(LeaseRecord record, Answered done) {
      if (!closed) {
        sim.checks().writes(ShardSimReplica.this, p, lease);
      }
      Map<String, String> a = annotations;
      return send(server -> write(server.create(lease, record, a), record), done);
    }

    @Override
    public Call update(LeaseRecord record, Answered done) {
      if (!closed) {
        sim.checks().writes(ShardSimReplica.this, p, lease);
      }
      Map<String, String> a = annotations;
      return send(server -> write(server.update(lease, record, a), record), done);
    }

    private Answer write(Answer answer, LeaseRecord record) {
      if (membership && answer instanceof Answer.Written written && record.holder() == null) {
        sim.checks().membershipReleased(ShardSimReplica.this, p);
        releasedVersion = written.record().resourceVersion();
      }
      return answer;
    }

    @Override
    public Call delete(LeaseRecord released, Answered done) {
      if (!membership) {
        sim.checks().shardLeaseDeleteSent(ShardSimReplica.this, lease);
      }
      deleteSent = true;
      return send(server -> {
        ShardSimServer.Stored before = server.stored(lease);
        Answer answer = server.delete(lease, released);
        if (answer instanceof Answer.Missing) {
          sim.checks().membershipDeleted(ShardSimReplica.this, before, released);
        }
        return answer;
      }, done);
    }

    private Call send(java.util.function.Function<ShardSimServer, Answer> call, Answered done) {
      if (closed || process != p) {
        return () -> { };
      }
      boolean[] cancelled = {false};
      sim.request(ShardSimReplica.this, call, answer -> {
        if (!cancelled[0] && !closed) {
          if (!(answer instanceof Answer.Failed failed) || failed.kind() != LeaseStep.FailureKind.OTHER) {
            sim.answered(ShardSimReplica.this); // the server answered: the runner's list and watch may list again
          }
          long late = membership && !(answer instanceof Answer.Found) ? membershipAnswerDelayNanos : 0;
          if (late > 0) {
            sim.at(sim.now() + late, ShardSimReplica.this, p, () -> {
              if (!cancelled[0] && !closed) {
                done.answered(answer, failure(answer));
              }
            });
          } else {
            done.answered(answer, failure(answer));
          }
        }
      });
      return () -> cancelled[0] = true;
    }

    private Throwable failure(Answer answer) {
      if (!(answer instanceof Answer.Failed failed)) {
        return null;
      }
      int code = failed.kind() == LeaseStep.FailureKind.CONFLICT ? LeaseCallFailed.CONFLICT
          : failed.kind() == LeaseStep.FailureKind.NOT_FOUND ? LeaseCallFailed.NOT_FOUND : 503;
      return new LeaseCallFailed(failed.failure(), null, code);
    }

    @Override
    public Call watch(WatchEvents events) {
      if (closed || process != p) {
        return () -> { };
      }
      ShardSim.LeaseWatch watch = sim.openLeaseWatch(ShardSimReplica.this, lease, events);
      watches.add(watch);
      return () -> {
        watches.remove(watch);
        sim.closeLeaseWatch(watch);
      };
    }

    /**
     * The membership runner's RBAC preflight as production sends it in the usual case: one round trip (its
     * SelfSubjectRulesReview), granted; a lost leg or a server that is down gives no verdict until the request
     * timeout, then none (unknown: the runner contends, as after Fabric8LeaseTransport's deadline).
     */
    @Override
    public Call preflight(Consumer<Optional<LeaseAccessDeniedException>> done, Consumer<Throwable> failed) {
      if (closed || process != p) {
        return () -> { };
      }
      boolean[] over = {false};
      Runnable verdict = () -> {
        if (!over[0] && !closed) {
          over[0] = true;
          done.accept(Optional.empty());
        }
      };
      sim.request(ShardSimReplica.this, server -> new Answer.Missing(), answer -> verdict.run());
      sim.at(sim.now() + sim.config().timeoutMillis() * 1_000_000L, ShardSimReplica.this, p, verdict);
      return () -> over[0] = true;
    }

    @Override
    public void recordEvent(LeadershipEvent event, Runnable done) {
      done.run();
    }

    @Override
    public void close() {
      closed = true;
      for (ShardSim.LeaseWatch watch : watches) {
        sim.closeLeaseWatch(watch);
      }
      watches.clear();
    }
  }
}
