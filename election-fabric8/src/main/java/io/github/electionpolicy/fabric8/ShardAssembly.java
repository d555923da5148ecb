package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.DecisionLog;
import io.github.electionpolicy.ElectionDecision;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link ShardedRunner} is built from, and how its parts follow from it, as {@link RunnerAssembly} is for an
 * {@link ElectionRunner}: the inputs its builder collects, their check, and the production seams of {@link
 * ShardDriver} (a {@link Fabric8LeaseTransport} per Lease, the {@link ShardLeaseSource} informer).
 *
 * <p>Not thread-safe: one builder fills it from one thread.
 */
final class ShardAssembly {

  private static final Logger LOG = LoggerFactory.getLogger(ShardedRunner.class);

  KubernetesClient client;
  ElectionDecision decision;
  LeaseSettings settings;
  Integer shardCount;
  ShardService service;
  final List<ShardListener> listeners = new ArrayList<>();
  boolean rbacPreflight = true;
  Readiness readiness = Readiness.CONNECTED;
  Ticker ticker = Ticker.system();
  Clock clock = Clock.systemUTC();
  RunnerLoop loop = RunnerLoop.shared();
  Executor userCode = SharedPools.userCode();
  Transports transports;
  ShardViewSource source;
  ShardCoordinator.Flaw flaw = ShardCoordinator.Flaw.NONE;
  ShardDriverFlaw driverFlaw = ShardDriverFlaw.NONE;
  private boolean started;

  /** A contending replica's parts; {@code driver} is null when running unelected (then {@code unelected} is set). */
  record Parts(ElectionDecision decision, Shards shards, String identity, Optional<String> namespace,
      Optional<String> baseLeaseName, ShardDriver driver, ElectionRunner unelected, Ticker ticker,
      HealthRule.Inputs healthInputs) {}

  /** Throws for an input that is missing, naming it and the call that sets it. */
  void check() {
    if (decision == null) {
      throw new IllegalStateException("no decision: call decision(...) or decide(policy, environment, substrate)");
    }
    if (shardCount == null) {
      throw new IllegalStateException("no shard count: call shards(n), e.g. shards(16)");
    }
    if (service == null) {
      throw new IllegalStateException("no service: set the work of one shard with service(...)");
    }
    if (decision.contends() && settings == null) {
      throw new IllegalStateException("the decision is to contend but no settings were given: call "
          + "settings(LeaseSettings.builder().leaseName(...).build()); the Lease name is the base of the shards' "
          + "Lease names");
    }
    if (decision.contends() && client == null && transports == null) {
      throw new IllegalStateException("the decision is to contend but no client was given: call "
          + "client(kubernetesClient)");
    }
  }

  /** Checks, builds and starts, once: a second call throws. */
  Parts start() {
    if (started) {
      throw new IllegalStateException("this builder already started a sharded runner; use a new builder");
    }
    check();
    Shards shards = Shards.of(shardCount);
    if (!decision.contends()) {
      // The listeners hear of every shard once all started, of none once all stopped, then of the stop, as a
      // contending replica's do: ShardListener promises its calls whatever the decision.
      UnelectedListeners heard = new UnelectedListeners(new ShardListeners(listeners, userCode, loop, "unelected",
          this));
      ElectionRunner.Builder unelected = ElectionRunner.builder().decision(decision)
          .service(new AllShards(shards.count(), service, heard::owned)).listener(heard).readiness(readiness)
          .ticker(ticker).clock(clock).loop(loop).userCode(userCode);
      if (settings != null) {
        unelected.settings(settings);
      }
      started = true;
      ElectionRunner runner = unelected.start();
      return new Parts(decision, shards, runner.identity(), Optional.empty(), Optional.empty(), null, runner,
          ticker, null);
    }
    ShardLeases leases = new ShardLeases(settings.leaseName(), shards.count());
    ProcessIdentity.Resolved resolved = ProcessIdentity.resolve(settings);
    String identity = resolved.identity();
    String namespace;
    try {
      namespace = LeaseNamespace.resolve(settings, client == null ? null : client.getNamespace()).name();
    } catch (RuntimeException e) {
      DecisionLog.log(decision);
      throw e;
    }
    long startNanos = ticker.read();
    ShardLeaseRunners leaseRunners = leaseRunners(identity, namespace, leases, transports != null ? transports
        : leaseSettings -> {
          Fabric8LeaseTransport transport = new Fabric8LeaseTransport(client, namespace, leaseSettings,
              SharedPools.io());
          // Only the membership Lease's runner runs the preflight; it asks for what the whole replica uses.
          transport.needs(LeaseNeeds.sharded(settings.leaseName()));
          return new Opened(transport, transport::writeMetadata);
        });
    ShardViewSource view = source != null ? source
        : sink -> ShardLeaseSource.open(client, namespace, leases, settings.retryPeriod(), ticker, sink);
    long retry = settings.retryPeriod().toNanos();
    ShardDriver driver = new ShardDriver(new ShardDriver.Parts(identity, leases, shards.count(), service, loop, ticker,
        leaseRunners, view, settings.leaseDuration().toNanos(), 2 * retry, Math.max(1, retry / 2),
        Math.max(3 * retry, settings.leaseDuration().toNanos() / 2), flaw, driverFlaw));
    driver.listeners(new ShardListeners(listeners, userCode, loop, identity, driver));
    started = true;
    DecisionLog.log(decision);
    LOG.info("Contending for {} shards of {}/{} as {} ({}; lease {}, renew deadline {}, retry {}, on loss {})",
        shards.count(), namespace, settings.leaseName(), identity, resolved.source(),
        Durations.format(settings.leaseDuration()), Durations.format(settings.renewDeadline()),
        Durations.format(settings.retryPeriod()), settings.lossPolicy());
    driver.start();
    return new Parts(decision, shards, identity, Optional.of(namespace), Optional.of(settings.leaseName()), driver,
        null, ticker, new HealthRule.Inputs(true, readiness, settings.healthBudget().toNanos(), startNanos));
  }

  /** Opens the transport of one of the controller's Leases: Fabric8's in production, the simulation's in its tests. */
  interface Transports {
    Opened open(LeaseSettings leaseSettings);
  }

  /** A Lease's transport, and how to set the labels and annotations its writes carry from then on. */
  record Opened(LeaseTransport transport, BiConsumer<Map<String, String>, Map<String, String>> writeMetadata) {}

  /** The runners: one {@link LifecycleDriver} per Lease, over a transport of {@code transports}. */
  private ShardLeaseRunners leaseRunners(String identity, String namespace, ShardLeases leases,
      Transports transports) {
    Map<String, String> labels = Map.of(ShardLeases.LABEL, leases.labelValue());
    return (leaseName, work, membership) -> {
      LeaseSettings.Builder lease = settings.toBuilder().leaseName(leaseName).identity(identity).namespace(namespace);
      if (membership) {
        // Losing membership ends no work of its own (each shard has its term): it joins again, whatever the policy.
        lease.lossPolicy(LossPolicy.recontend()).leadershipEvents(false);
      }
      LeaseSettings leaseSettings = lease.build();
      Opened opened = transports.open(leaseSettings);
      // A member's writes say it is not leaving until it is: a Lease keeps the annotations no write sets, so the
      // mark of an earlier process of the same identity (closed, then restarted) would count this one out for good.
      Map<String, String> joining = membership ? Map.of(ShardLeases.LEAVING, "false") : Map.of();
      opened.writeMetadata().accept(labels, joining);
      LifecycleDriver driver = new LifecycleDriver(new LifecycleDriver.Parts(identity, namespace + "/" + leaseName,
          leaseSettings, Optional.empty(), List.of(work), List.of(), loop, userCode, Optional.of(opened.transport()),
          membership && rbacPreflight, ticker, clock, leaseName + ":" + identity,
          driverFlaw == ShardDriverFlaw.HAND_OVER_DATED_AT_SIGHT && !membership
              ? LeaseProtocol.Flaw.HAND_OVER_DATED_AT_SIGHT : LeaseProtocol.Flaw.NONE,
          RunnerFlaw.NONE, membership));
      return new ShardLeaseRunners.LeaseRunner(driver, annotations -> opened.writeMetadata().accept(labels, annotations));
    };
  }

  /**
   * Running unelected: hands what {@link AllShards} runs and the runner's stop to the {@link ShardListeners}. Called
   * from the runner's services lane (the shards) and its listener lane (the stop), one after the other, never at
   * once (the stop is published after the services stopped), and synchronized all the same.
   */
  static final class UnelectedListeners implements ElectionListener {
    private final ShardListeners listeners;
    private java.util.SortedMap<Integer, LeadershipTerm> owned = java.util.Collections.emptySortedMap();

    UnelectedListeners(ShardListeners listeners) {
      this.listeners = listeners;
    }

    synchronized void owned(java.util.SortedMap<Integer, LeadershipTerm> now) {
      owned = now;
      listeners.published(now, false, Optional.empty());
    }

    @Override
    public synchronized void stateChanged(ElectionState previous, ElectionState current) {
      if (current instanceof ElectionState.Stopped stopped) {
        owned = java.util.Collections.emptySortedMap();
        listeners.published(owned, true, stopped.failure());
      }
    }
  }

  /** Running unelected: one service that runs every shard's work, started in order and stopped in reverse. */
  static final class AllShards implements LeaderService {
    private final int count;
    private final ShardService service;
    private final java.util.function.Consumer<java.util.SortedMap<Integer, LeadershipTerm>> owned;
    private final List<Integer> started = new ArrayList<>();

    /** @param owned hears the shards whose work runs: every shard once all started, none once they stopped */
    AllShards(int count, ShardService service,
        java.util.function.Consumer<java.util.SortedMap<Integer, LeadershipTerm>> owned) {
      this.count = count;
      this.service = service;
      this.owned = owned;
    }

    @Override
    public synchronized void start(LeadershipTerm term) throws Exception {
      for (int shard = 0; shard < count; shard++) {
        try {
          service.start(shard, term);
        } catch (Throwable e) {
          // The shards begun are stopped here: a service whose start throws must undo what it began.
          try {
            stop();
          } catch (Throwable again) {
            if (again != e) {
              e.addSuppressed(again); // the same instance would throw "Self-suppression not permitted"
            }
          }
          throw e;
        }
        started.add(shard);
      }
      java.util.TreeMap<Integer, LeadershipTerm> all = new java.util.TreeMap<>();
      for (int shard = 0; shard < count; shard++) {
        all.put(shard, term);
      }
      owned.accept(java.util.Collections.unmodifiableSortedMap(all));
    }

    @Override
    public synchronized void stop() throws Exception {
      Throwable first = null;
      for (int i = started.size() - 1; i >= 0; i--) {
        try {
          service.stop(started.get(i));
        } catch (Throwable e) {
          if (first == null) {
            first = e;
          } else if (e != first) {
            first.addSuppressed(e); // a stop that throws one instance for every shard: not suppressed by itself
          }
        }
      }
      started.clear();
      owned.accept(java.util.Collections.emptySortedMap());
      if (first instanceof Exception exception) {
        throw exception;
      } else if (first instanceof Error error) {
        throw error;
      } else if (first != null) {
        throw AllShards.<RuntimeException>rethrow(first); // a raw Throwable (a sneaky throw), as it was thrown
      }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T rethrow(Throwable e) throws T {
      throw (T) e;
    }

    @Override
    public String toString() {
      return "every shard of " + count + " of " + service;
    }
  }
}
