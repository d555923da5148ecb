package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.Executor;

/**
 * Spreads a controller's work over its replicas: the work is split into a fixed number of {@link Shards}, and every
 * shard is owned by exactly one replica at a time, through a Lease of its own, with the guarantees an {@link
 * ElectionRunner} gives its one Lease (the shard's work runs only while its term is valid, stops before anyone else
 * can own the shard, and the Lease is released after a clean stop). Each live replica owns a fair share: with
 * {@code M} replicas, {@code floor(S/M)} or {@code ceil(S/M)} of the {@code S} shards, once membership has been
 * stable for two retry periods. A replica that joins is handed its share by the others, shard by shard (each
 * stopped, released and taken through a watch); one that closes marks itself as leaving and hands over its shards at
 * once; one that crashes loses them after the lease duration.
 *
 * <pre>{@code
 * ShardedRunner runner = ShardedRunner.builder()
 *     .client(client)
 *     .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.usingKubernetesApi("kubernetes"))
 *     .settings(LeaseSettings.builder().leaseName("orders-controller").build())
 *     .shards(16)
 *     .service(ShardService.of((shard, term) -> workers.start(shard, term), shard -> workers.stop(shard)))
 *     .start();
 * Runtime.getRuntime().addShutdownHook(new Thread(runner::close));
 * // in a reconcile: is this object mine, and under which term?
 * runner.termFor(order).ifPresent(term -> reconcile(order, term));
 * }</pre>
 *
 * <p>The same decision as an {@link ElectionRunner}'s: {@link ElectionDecision.Outcome#RUN_UNELECTED RUN_UNELECTED}
 * owns every shard at once, with no API call; {@link ElectionDecision.Outcome#CONTEND CONTEND} contends. The Leases
 * of a controller whose settings name the Lease {@code L} are {@code L-shard-<i>}, one per shard, and {@code
 * L-member-<identity>}, one per replica, all labelled {@code election-policy.io/sharded-lease=L}; each replica lists
 * and watches them once (one watch, whatever the shard count). The settings apply to every shard's Lease (durations,
 * stop timeout, loss policy, events); the membership Lease always contends again after a loss, since it runs no work.
 *
 * <p>Like an {@link ElectionRunner}, it has no thread of its own: its runners share the JVM's loop and pools.
 * Thread-safe.
 */
public final class ShardedRunner implements AutoCloseable {

  private final ShardAssembly.Parts parts;

  private ShardedRunner(ShardAssembly.Parts parts) {
    this.parts = parts;
  }

  /**
   * Starts a builder.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The decision this runner acts on.
   *
   * @return the decision
   */
  public ElectionDecision decision() {
    return parts.decision();
  }

  /**
   * The shards of the controller's work, and the map from an object to its shard.
   *
   * @return the shards
   */
  public Shards shards() {
    return parts.shards();
  }

  /**
   * The identity of this replica, written as holder of the Leases it holds.
   *
   * @return the identity
   */
  public String identity() {
    return parts.identity();
  }

  /**
   * The namespace of the controller's Leases.
   *
   * @return the namespace; empty when running unelected
   */
  public Optional<String> namespace() {
    return parts.namespace();
  }

  /**
   * The shards this replica owns now, each with the term of its Lease under which its work runs. A shard being handed
   * over is no longer in it (its work is stopping), nor one whose term ended. Running unelected, every shard, under the
   * one unelected term.
   *
   * @return the owned shards by shard number, in order; an immutable snapshot
   */
  public SortedMap<Integer, LeadershipTerm> ownedShards() {
    if (parts.driver() == null) {
      Optional<LeadershipTerm> term = parts.unelected().currentTerm();
      if (term.isEmpty() || !term.get().isValid()) {
        return Collections.emptySortedMap();
      }
      TreeMap<Integer, LeadershipTerm> all = new TreeMap<>();
      for (int shard = 0; shard < parts.shards().count(); shard++) {
        all.put(shard, term.get());
      }
      return Collections.unmodifiableSortedMap(all);
    }
    TreeMap<Integer, LeadershipTerm> owned = new TreeMap<>(parts.driver().snapshot().owned());
    owned.values().removeIf(term -> !term.isValid()); // a term may end before the driver hears of it
    return Collections.unmodifiableSortedMap(owned);
  }

  /**
   * Whether this replica owns {@code shard} now, and under which term: the term while it is valid, else empty.
   *
   * @param shard the shard, from 0 to the shard count minus one
   * @return the shard's term, if this replica owns it now
   * @throws IllegalArgumentException if {@code shard} is not a shard of this runner's
   */
  public Optional<LeadershipTerm> termForShard(int shard) {
    if (shard < 0 || shard >= parts.shards().count()) {
      throw new IllegalArgumentException("shard is " + shard + "; expected 0 to " + (parts.shards().count() - 1));
    }
    // The one shard's entry, not ownedShards(): a reconcile asks this of every object, and that map is every shard.
    LeadershipTerm term = parts.driver() == null ? parts.unelected().currentTerm().orElse(null)
        : parts.driver().snapshot().owned().get(shard);
    return term != null && term.isValid() ? Optional.of(term) : Optional.empty();
  }

  /**
   * Whether {@code object} is this replica's to reconcile now, and under which term: by the shard of its {@code
   * metadata.uid} ({@link Shards#shardOf(HasMetadata)}).
   *
   * @param object an object with a uid
   * @return the term of the object's shard, if this replica owns it now
   * @throws IllegalArgumentException if the object has no uid
   */
  public Optional<LeadershipTerm> termFor(HasMetadata object) {
    return termForShard(parts.shards().shardOf(object));
  }

  /**
   * Whether the objects of {@code namespace} are this replica's now, for namespace-scoped sharding ({@link
   * Shards#shardOfNamespace(String)}).
   *
   * @param namespace a namespace name; the empty string for cluster-scoped objects
   * @return the term of the namespace's shard, if this replica owns it now
   * @throws NullPointerException when {@code namespace} is null (fabric8's namespace of a cluster-scoped object: pass
   *     the empty string)
   */
  public Optional<LeadershipTerm> termForNamespace(String namespace) {
    return termForShard(parts.shards().shardOfNamespace(namespace));
  }

  /**
   * A health snapshot for probes, by the rules of {@link ElectionHealth} applied to this replica's membership Lease
   * (its state there is {@code LEADING} while it is a member); not ready before its list and watch of the controller's
   * Leases first listed them (an account that may not list or watch Leases never gets there, and an ERROR says so
   * after one lease duration), while a list and watch that fails after that changes neither readiness nor liveness
   * (it lists again within a retry period of the server answering); not live while a shard's {@code stop()} outlived
   * the stop timeout or after the replica gave up its shards because one did.
   *
   * @return the snapshot
   */
  public ElectionHealth health() {
    if (parts.driver() == null) {
      return parts.unelected().health();
    }
    ShardDriver.Snapshot snapshot = parts.driver().snapshot();
    RunnerView membership = snapshot.membership();
    boolean termValid = membership.state() instanceof ElectionState.Leading leading && leading.term().isValid();
    ElectionHealth health = HealthRule.evaluate(parts.healthInputs(), membership, parts.ticker().read(), termValid,
        parts.driver().closeRequested());
    // Gave up its shards: leaving, releasing its membership Lease (every shard runner stopped) or stopped.
    ShardCoordinatorPhase.StopCause cause = snapshot.phase() instanceof ShardCoordinatorPhase.Stopped stopped
        ? stopped.cause() : snapshot.phase() instanceof ShardCoordinatorPhase.Leaving leaving ? leaving.cause()
        : snapshot.phase() instanceof ShardCoordinatorPhase.Releasing releasing ? releasing.cause() : null;
    boolean abandoned = cause == ShardCoordinatorPhase.StopCause.SHARD_ABANDONED;
    boolean live = health.live() && !snapshot.shardHung() && !abandoned;
    // Not ready before its list and watch listed the controller's Leases: it owns nothing until then.
    boolean ready = health.ready() && live && snapshot.viewSynced();
    return new ElectionHealth(ready, live, health.state(), health.sinceLastLeaseSuccess());
  }

  /**
   * Whether this replica has stopped: closed, or on its own (its membership Lease was denied, a shard's work did not
   * stop cleanly, or its own logic failed).
   *
   * @return true once stopped
   */
  public boolean isStopped() {
    return parts.driver() == null ? parts.unelected().state() instanceof ElectionState.Stopped
        : parts.driver().hasStopped();
  }

  /**
   * Why this replica stopped on its own, if it did: the failure of its membership Lease's runner (e.g. the {@link
   * LeaseAccessDeniedException} of the RBAC preflight), a shard whose {@code stop()} threw or outlived the stop
   * timeout, a shard's term lost under a loss policy that does not contend again (a {@link LossHandler} that answered
   * {@link LossHandler.AfterLoss#STOP}; each an {@link IllegalStateException} that says so), or the failure of its own
   * logic.
   *
   * @return what made it stop, if anything did but a close
   */
  public Optional<Throwable> failure() {
    if (parts.driver() == null) {
      return parts.unelected().state() instanceof ElectionState.Stopped stopped ? stopped.failure() : Optional.empty();
    }
    return parts.driver().failure();
  }

  /**
   * Waits until this replica has stopped (see {@link #isStopped()}). From a shard's own callback it returns at once.
   *
   * @param timeout the longest wait
   * @return true if stopped, false if the wait timed out
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean awaitStopped(Duration timeout) throws InterruptedException {
    if (parts.driver() == null) {
      return parts.unelected().awaitStopped(timeout);
    }
    if (parts.driver().inCallback()) {
      return parts.driver().hasStopped();
    }
    return parts.driver().awaitStopped(Durations.cappedNanos(timeout));
  }

  /**
   * Leaves: marks this replica as leaving (every other replica counts it out at once), hands over every shard once
   * its own list and watch shows the mark (its work stopped, waiting at most {@link LeaseSettings#stopTimeout()} per
   * shard, then its Lease handed over to the member that takes it, which needs no write to start it, or released where
   * no member's plan takes it; a shard whose work did not stop in time is left to expire); while another replica that
   * began leaving first still holds a shard, it stays to decline what that one may hand it (at most a lease duration
   * from the close), and releases the membership
   * Lease last, then deletes it, conditional on the released record (a Lease written since stays; a failed delete is
   * logged and leaves it released; see docs/sharding.md). Idempotent. Returns once stopped; from a shard's own
   * callback it returns at once, and the shards stop once that callback returned. An interrupt does not cut it
   * short: it waits on, and sets the flag again.
   */
  @Override
  public void close() {
    if (parts.driver() == null) {
      parts.unelected().close();
      return;
    }
    parts.driver().requestClose();
    if (parts.driver().inCallback()) {
      return;
    }
    boolean interrupted = false;
    boolean stopped = false;
    while (true) {
      try {
        if (!stopped) {
          parts.driver().awaitStopped(Long.MAX_VALUE);
          stopped = true;
        }
        // Its last lines are written before close() returns; a stuck appender is waited for a second at most.
        parts.driver().awaitLogWritten(java.util.concurrent.TimeUnit.SECONDS.toNanos(1));
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Asks the replica to leave as {@link #close()} does, without waiting: the simulation runs the loop on the caller's
   * one thread, so it must not block there.
   */
  void requestClose() {
    if (parts.driver() == null) {
      parts.unelected().close();
    } else {
      parts.driver().requestClose();
    }
  }

  @Override
  public String toString() {
    return "ShardedRunner{" + parts.identity() + ", owns " + ownedShards().keySet() + "}";
  }

  /**
   * Builds and starts a {@link ShardedRunner} (see its example). Setters reject null at once; {@link #start()} checks
   * what is missing. Not thread-safe: use one builder from one thread.
   */
  public static final class Builder {
    private final ShardAssembly inputs = new ShardAssembly();

    private Builder() {}

    /**
     * Sets the client used for the Lease calls and the watch of the controller's Leases. Required when the decision
     * is to contend. The list and watch goes through a client of its own over this one (its HTTP client, credentials
     * and request settings, impersonation included) whose back-off after a failure is capped at the retry period,
     * whatever this client's {@code watchReconnectInterval}; this client's settings are not changed.
     *
     * @param client the client
     * @return this builder
     */
    public Builder client(KubernetesClient client) {
      inputs.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * Sets the decision to act on. Required (or {@link #decide(ElectionPolicy, Environment, Substrate)}).
     *
     * @param decision the core's decision
     * @return this builder
     */
    public Builder decision(ElectionDecision decision) {
      inputs.decision = Objects.requireNonNull(decision, "decision");
      return this;
    }

    /**
     * Computes the decision to act on from a policy, an environment and a substrate.
     *
     * @param policy the policy, e.g. {@link ElectionPolicy#defaults()}
     * @param environment the environment, e.g. {@link Environment#system()}
     * @param substrate what the controller works on
     * @return this builder
     */
    public Builder decide(ElectionPolicy policy, Environment environment, Substrate substrate) {
      return decision(Objects.requireNonNull(policy, "policy").decide(environment, substrate));
    }

    /**
     * Sets the Lease settings, applied to every shard's Lease; the Lease name is the base of the controller's Lease
     * names. Required when the decision is to contend.
     *
     * @param settings the settings
     * @return this builder
     */
    public Builder settings(LeaseSettings settings) {
      inputs.settings = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /**
     * Sets the number of shards, fixed for the controller: every replica must use the same. Required.
     *
     * @param count from 1 to {@value Shards#MAX_COUNT}; a few times the most replicas you will run (e.g. 16 or 64)
     * @return this builder
     * @throws IllegalArgumentException if {@code count} is out of range
     */
    public Builder shards(int count) {
      inputs.shardCount = Shards.of(count).count();
      return this;
    }

    /**
     * Sets the work of one shard. Required.
     *
     * @param service started for each shard this replica takes, stopped before the shard moves
     * @return this builder
     */
    public Builder service(ShardService service) {
      inputs.service = Objects.requireNonNull(service, "service");
      return this;
    }

    /**
     * Adds a listener of the shards this replica owns and of its stop (contending only; running unelected, the one
     * replica owns every shard from start to close).
     *
     * @param listener the listener
     * @return this builder
     */
    public Builder listener(ShardListener listener) {
      inputs.listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    /**
     * Sets which replicas {@link ShardedRunner#health()} calls ready: {@link Readiness#CONNECTED} (the default: every
     * member in touch with the API server) or {@link Readiness#LEADER_ONLY} (members only: a replica that is not yet
     * a member, or no longer one, is not ready).
     *
     * @param readiness the readiness mode
     * @return this builder
     */
    public Builder readiness(Readiness readiness) {
      inputs.readiness = Objects.requireNonNull(readiness, "readiness");
      return this;
    }

    /**
     * Turns the RBAC preflight on (the default) or off: before the replica joins, and before it lists and watches the
     * controller's Leases, it checks what the replica uses on leases ({@code get}, {@code create}, {@code update},
     * {@code list} and {@code watch} on every Lease of the namespace; {@code delete} of its membership Lease, whose
     * denial only warns); a denial stops the replica ({@link ShardedRunner#failure()} holds the {@link
     * LeaseAccessDeniedException}) with no list sent. With it on, the first list goes out once the verdict came (one
     * round trip after the start, usually); off, at once.
     *
     * @param enabled whether to check with SelfSubjectAccessReviews before joining
     * @return this builder
     */
    public Builder rbacPreflight(boolean enabled) {
      inputs.rbacPreflight = enabled;
      return this;
    }

    // Package-private seams: the simulation's loop, executor, clocks, transports and view; the coordinator's defects.
    Builder ticker(Ticker ticker) { inputs.ticker = Objects.requireNonNull(ticker, "ticker"); return this; }
    Builder clock(Clock clock) { inputs.clock = Objects.requireNonNull(clock, "clock"); return this; }
    Builder loop(RunnerLoop loop) { inputs.loop = Objects.requireNonNull(loop, "loop"); return this; }
    Builder userCode(Executor userCode) { inputs.userCode = Objects.requireNonNull(userCode, "userCode"); return this; }
    Builder transports(ShardAssembly.Transports t) { inputs.transports = Objects.requireNonNull(t, "t"); return this; }
    Builder source(ShardViewSource s) { inputs.source = Objects.requireNonNull(s, "source"); return this; }
    Builder flaw(ShardCoordinator.Flaw flaw) { inputs.flaw = Objects.requireNonNull(flaw, "flaw"); return this; }
    Builder driverFlaw(ShardDriverFlaw f) { inputs.driverFlaw = Objects.requireNonNull(f, "driverFlaw"); return this; }

    /**
     * Logs the decision and starts: running unelected, every shard's work at once (this call returns once it
     * started); contending, the replica joins on the shared loop and returns promptly, with no shard owned yet.
     *
     * @return the running runner; close it to stop
     * @throws IllegalStateException if a required input is missing, if a shard failed to start while running
     *     unelected, or if this builder already started a runner
     * @throws io.github.electionpolicy.InvalidElectionSettingException if no namespace can be found, or the one found
     *     is not a valid namespace name
     */
    public ShardedRunner start() {
      return new ShardedRunner(inputs.start());
    }
  }
}
