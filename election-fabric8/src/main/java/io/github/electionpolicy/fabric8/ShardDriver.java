package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.ShardCoordinatorCommand.*;
import io.github.electionpolicy.fabric8.ShardCoordinatorInput.*;
import io.github.electionpolicy.fabric8.ShardCoordinatorPhase.StopCause;
import io.github.electionpolicy.fabric8.ShardLeaseRunners.LeaseRunner;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Owns one replica's share of a sharded controller on its {@link RunnerLoop}, as {@link LifecycleDriver} owns one
 * runner: it feeds {@link ShardCoordinator} its inputs one at a time and carries out its commands. The runners it
 * starts are ordinary {@link LifecycleDriver}s on the same loop, one per shard the coordinator contends for and one
 * for the membership Lease, built by a {@link ShardLeaseRunners} seam; what they publish comes back, on the loop, as the
 * coordinator's inputs. The view of the controller's Leases comes from a {@link ShardViewSource} (one informer,
 * {@link ShardLeaseSource}, opened once the membership runner may write) through {@link ShardLeaseView}, judged on the
 * loop's ticker. After each batch it publishes one immutable {@link Snapshot} for readers on other threads.
 *
 * <p>What the coordinator logic throws on the loop ends the replica's share as a close does, and the stop reports it
 * ({@link #failure()}); the loop survives it. Thread-safe where it says so ({@link #snapshot()}, {@link
 * #requestClose()}, {@link #awaitStopped}); every other method runs on the loop.
 */
final class ShardDriver {

  /** What readers see: the coordinator's phase and the terms of the shards this replica owns and keeps. */
  record Snapshot(ShardCoordinatorPhase phase, SortedMap<Integer, LeadershipTerm> owned, RunnerView membership,
      boolean shardHung, boolean viewSynced) {}

  /** What the driver is built from; {@code silenceNanos}: see {@link ShardViewFeed#checkSilence}. */
  record Parts(String identity, ShardLeases leases, int shardCount, ShardService service, RunnerLoop loop,
      Ticker ticker, ShardLeaseRunners runners, ShardViewSource source, long leaseDurationNanos, long settleNanos,
      long tickNanos, long silenceNanos, ShardCoordinator.Flaw flaw, ShardDriverFlaw driverFlaw) {}

  private static final LeaderService MEMBERSHIP = LeaderService.of(term -> { }, () -> { });

  private final Parts parts;
  private final RunnerLoop loop;
  private final Ticker ticker;
  private final ShardCoordinator coordinator;
  private final ShardLeaseView view;
  // Never written on the loop, which every runner of the JVM shares (see RunnerLog).
  private final RunnerLog.Lane logLane;
  private final RunnerLog log;
  private final StopLatch stopped = new StopLatch();
  private final AtomicBoolean closeRequested = new AtomicBoolean();
  private final AtomicBoolean userClosed = new AtomicBoolean(); // requestClose() was called: it passes the close on
  // Every runner this driver started and that has not stopped: for close() from inside one of their callbacks.
  private final Set<LifecycleDriver> live = ConcurrentHashMap.newKeySet();

  // Confined to the loop.
  private final ArrayDeque<ShardCoordinatorInput> inputs = new ArrayDeque<>();
  private boolean draining;
  private final TreeMap<Integer, ShardRun> shards = new TreeMap<>();
  private final TreeMap<Integer, LeadershipTerm> terms = new TreeMap<>();
  private final ShardHandOvers handOvers;
  private LeaseRunner membership;
  private boolean membershipLeading;
  private boolean leaveAsked;
  private final ShardViewFeed feed;
  private RunnerLoop.Timer tickTimer;
  private final LeavingMark mark; // leaving: the hand-overs held until the view shows the mark
  private boolean done;
  // Stopped (or failed): the replica reports it once every runner it started stopped.
  private boolean stopWhenIdle;
  private RunnerView membershipView = new RunnerView(new ElectionState.Starting(), false, false, Optional.empty(), 0);
  private volatile Throwable failure;

  private volatile Snapshot snapshot;
  private ShardListeners listeners; // set before start

  private record ShardRun(LeaseRunner runner, ShardWork work) {}

  ShardDriver(Parts parts) {
    this.parts = Objects.requireNonNull(parts, "parts");
    this.loop = parts.loop();
    this.ticker = parts.ticker();
    this.coordinator = new ShardCoordinator(parts.identity(), parts.shardCount(), parts.settleNanos(),
        parts.leaseDurationNanos(), ShardPlanner.FAIR, parts.flaw());
    this.view = new ShardLeaseView(parts.leases(), parts.leaseDurationNanos());
    this.logLane = new RunnerLog.Lane(loop, loop.logWriter(), "shards:" + parts.identity());
    this.log = new RunnerLog(ShardedRunner.class, logLane);
    this.mark = new LeavingMark(loop, this::closeShard);
    this.feed = new ShardViewFeed(view, parts.leases(), parts.leaseDurationNanos(), parts.silenceNanos(), loop, ticker,
        this::onLoop, parts.driverFlaw(), new ViewListener(), log);
    this.handOvers = new ShardHandOvers(parts.identity(), parts.shardCount(),
        shard -> Optional.ofNullable(shards.get(shard)).flatMap(run -> run.runner().driver().protocol()),
        () -> membership == null ? Optional.empty() : membership.driver().protocol());
    this.snapshot = new Snapshot(coordinator.phase(), Collections.emptySortedMap(), membershipView, false, false);
  }

  // ---- from any thread -------------------------------------------------------------------------------------

  Snapshot snapshot() {
    return snapshot;
  }

  /** Before {@link #start}: who hears of the owned shards and the stop. */
  void listeners(ShardListeners listeners) {
    this.listeners = listeners;
  }

  /** What the coordinator logic threw, if it failed; the replica then stopped as if closed. */
  Optional<Throwable> failure() {
    return Optional.ofNullable(failure);
  }

  void start() {
    onLoop(() -> {
      inputs.add(new Start(ticker.read()));
      tick();
    });
  }

  /** Asks the replica to leave (once): its shards are handed over, then its membership Lease released. */
  void requestClose() {
    if (closeRequested.compareAndSet(false, true)) {
      onLoop(() -> inputs.add(new CloseRequested(ticker.read())));
    }
    // The user's first close answers a loss the coordinator's close left to the policy, as an ElectionRunner's close
    // does, after a leave on its own too (a STOP set closeRequested); closeShard closes as the user's from now on.
    if (userClosed.compareAndSet(false, true)) {
      onLoop(() -> live.forEach(LifecycleDriver::closeIfOwnerClosed));
    }
  }

  boolean closeRequested() {
    return closeRequested.get();
  }

  boolean hasStopped() {
    return stopped.released();
  }

  boolean awaitStopped(long timeoutNanos) throws InterruptedException {
    return stopped.await(timeoutNanos); // Long.MAX_VALUE: for ever (StopLatch)
  }

  /** Waits at most {@code timeoutNanos} for the lines logged until now to be written. */
  void awaitLogWritten(long timeoutNanos) throws InterruptedException {
    logLane.awaitWritten(timeoutNanos);
  }

  /** Whether the caller runs a callback of one of this replica's runners (a shard's start or stop). */
  boolean inCallback() {
    Object owner = CallbackLane.currentOwner();
    return owner != null && live.contains(owner);
  }

  // ---- the loop --------------------------------------------------------------------------------------------

  private void onLoop(Runnable task) {
    loop.execute(() -> guarded(task));
  }

  private void guarded(Runnable task) {
    try {
      task.run();
      drain();
    } catch (Throwable e) {
      failed(e);
    }
  }

  private void drain() {
    if (draining) {
      return;
    }
    draining = true;
    try {
      ShardCoordinatorInput input;
      while ((input = inputs.poll()) != null) {
        if (done) {
          continue;
        }
        for (ShardCoordinatorCommand command : coordinator.step(input)) {
          execute(command);
        }
      }
    } finally {
      draining = false;
    }
    publish();
  }

  private void execute(ShardCoordinatorCommand command) {
    if (command instanceof Join) {
      join();
    } else if (command instanceof Contend contend) {
      contend(contend.shard(), false);
    } else if (command instanceof Decline decline) {
      contend(decline.shard(), true);
    } else if (command instanceof HandOver handOver) {
      int shard = handOver.shard();
      terms.remove(shard);
      handOver.successor().ifPresent(next -> handOvers.name(shard, next));
      ShardRun run = shards.get(shard); // no start begins from here on; a leave holds only work that runs (LeavingMark)
      boolean runs = run != null && run.work().refuseStarts();
      if (handOver.why() != Why.LEAVING || run == null || !mark.hold(shard, runs)) {
        closeShard(shard);
      }
    } else if (command instanceof Name name) {
      handOvers.name(name.shard(), name.successor());
    } else if (command instanceof MarkSeen) {
      mark.release();
    } else if (command instanceof AnnounceLeaving) {
      if (membership != null) {
        mark.announce(membership, parts.settleNanos(), this::guarded); // held until the view shows it (MarkSeen)
      }
    } else if (command instanceof Leave) {
      leaveAsked = true;
      if (membership == null) {
        inputs.add(new MembershipReleased(ticker.read()));
      } else {
        membership.driver().requestClose();
      }
    } else if (command instanceof ReportStopped stopped) {
      finish(stopped.cause());
    }
  }

  /** The coordinator's close yields to a loss its runner handles (the policy answers it); after a close, a close. */
  private void closeShard(int shard) {
    Optional.ofNullable(shards.get(shard)).ifPresent(run -> run.runner().driver().requestClose(!closeRequested.get()));
  }

  private void join() {
    if (membership != null) {
      if (membershipLeading) {
        inputs.add(new MembershipHeld(ticker.read())); // it recontended and won before the coordinator joined again
      }
      return;
    }
    LeaseRunner runner = parts.runners().open(parts.leases().memberLease(parts.identity()), MEMBERSHIP, true);
    membership = runner;
    membershipLeading = false;
    observe(runner.driver(), state -> membershipState(runner, state));
    // The list and watch once the RBAC preflight let the membership runner contend: a replica it stops lists nothing.
    // At once (it opens, steps nothing): without a preflight it still goes out first, as the start's first request.
    runner.driver().observeAccessOnLoop(() -> guarded(() -> feed.open(parts.source())));
    runner.driver().observeRenewalsOnLoop(roundTrip -> guarded(() -> {
      if (membership == runner) {
        shards.keySet().forEach(this::sightedAgain);
      }
    }));
    observeAnswers(runner.driver());
    runner.driver().start();
  }

  /** A runner for {@code shard}; {@code decline}: one that only declines a hand-over, closed at once. */
  private void contend(int shard, boolean decline) {
    ShardWork work = new ShardWork(shard, parts.service());
    String lease = parts.leases().shardLease(shard);
    LeaseRunner runner = parts.runners().open(lease, work, false);
    ShardRun run = new ShardRun(runner, work);
    shards.put(shard, run);
    observe(runner.driver(), state -> shardState(shard, run, state));
    // Expiry dated from the view's first sight of the content; a released one taken unread unless a PUT would drop its
    // metadata; the highest token the view saw or a runner here took (deleted by hand since or not) counted past.
    runner.driver().beforeStart(elector -> {
      view.sighting(lease).ifPresent(seen -> elector.seen(seen.record(), parts.driverFlaw()
          == ShardDriverFlaw.SIGHTING_DATED_AT_CONTEND ? ticker.read() : seen.changedNanos(), seen.bare()));
      elector.seenTransitions(view.highestTransitions(lease));
      handOvers.prepare(elector.protocol(), shard, decline);
    });
    observeAnswers(runner.driver());
    runner.driver().start();
    if (decline) {
      runner.driver().requestClose(); // started only to decline a hand-over: ShardHandOvers.prepare
    }
  }

  /**
   * An answer of the API server to a call of {@code driver}'s shows the server reachable: the list and watch, if it
   * failed meanwhile, lists again at once rather than at its back-off's next try ({@link ShardViewFeed#answered}).
   * In a task of its own (the answer is taken in inside the runner's step), and only while a relist is due.
   */
  private void observeAnswers(LifecycleDriver driver) {
    driver.observeAnswersOnLoop(() -> {
      if (feed.relistDue()) {
        onLoop(feed::answered);
      }
    });
  }

  /**
   * Has {@code driver}'s states handed to {@code then} as it publishes them, on the loop, before its next command (a
   * shard is in the snapshot, {@code termFor}, before its service's {@code start} runs, and out of it once its runner
   * follows or stops). Safe to step the coordinator there: the runner publishes only from a task of its own, and what
   * this throws fails this driver, not the runner.
   */
  private void observe(LifecycleDriver driver, java.util.function.Consumer<ElectionState> then) {
    live.add(driver);
    driver.observeOnLoop(state -> guarded(() -> then.accept(state)));
  }

  private void membershipState(LeaseRunner runner, ElectionState state) {
    if (membership != runner || done) {
      if (state instanceof ElectionState.Stopped) {
        runnerStopped(runner.driver()); // one closed at the stop, or an earlier one's last word
      }
      return;
    }
    long now = ticker.read();
    if (state instanceof ElectionState.Leading) {
      membershipLeading = true;
      inputs.add(new MembershipHeld(now));
    } else if (state instanceof ElectionState.Following) {
      if (membershipLeading) {
        mark.release();
        membershipLeading = false;
        inputs.add(new MembershipLost(now));
      }
    } else if (state instanceof ElectionState.Stopped stoppedState) {
      mark.release();
      membershipView = runner.driver().view();
      runnerStopped(runner.driver());
      membership = null;
      membershipLeading = false;
      if (leaveAsked) {
        inputs.add(new MembershipReleased(now));
      } else if (stoppedState.cause() == ElectionState.StopCause.CLOSED) {
        inputs.add(new MembershipLost(now));
      } else {
        // Denied, or its election logic failed: joining again would fail the same way. The replica leaves.
        leaveOnItsOwn(stoppedState.failure().orElseGet(() -> new IllegalStateException(
            "the membership Lease's runner stopped: " + stoppedState.cause())), now);
        inputs.add(new MembershipLost(now));
      }
    }
  }

  private void shardState(int shard, ShardRun run, ElectionState state) {
    if (shards.get(shard) != run) {
      return; // a runner that stopped before: its shard has a new one
    }
    long now = ticker.read();
    if (state instanceof ElectionState.Leading leading) {
      view.took(parts.leases().shardLease(shard), leading.term().leaseTransitions()); // unseen by the view, maybe
      handOvers.led(shard, leading.term().leaseTransitions());
      terms.put(shard, leading.term());
      inputs.add(new ShardOwned(shard, leading.term().leaseTransitions(), now));
      mark.led(shard); // held, it took its shard again: handed over now, its term ended before its work's start
    } else if (state instanceof ElectionState.Following) {
      terms.remove(shard);
      inputs.add(new ShardContending(shard, now));
    } else if (state instanceof ElectionState.Stopped stopped) {
      terms.remove(shard);
      handOvers.stopped(shard); // before its removal: what its protocol led is read from it
      shards.remove(shard);
      runnerStopped(run.runner().driver());
      if (stopped.cause() == ElectionState.StopCause.LOST && !run.work().mayRun() && !closeRequested.get()
          && parts.driverFlaw() != ShardDriverFlaw.LOSS_RECONTENDS) { // the policy's STOP (or EXIT, exiter returned)
        leaveOnItsOwn(stopped.failure().orElseGet(() -> new IllegalStateException("shard " + shard + "'s term was "
            + "lost and its loss policy said not to contend again (a handler's STOP, or EXIT): this replica gave up "
            + "every shard and left; restart the process, or have the handler answer RECONTEND")), now);
      }
      boolean released = !run.work().mayRun() || parts.driverFlaw() == ShardDriverFlaw.STOPPED_COUNTS_AS_RELEASED;
      inputs.add(new ShardStopped(shard, released, now));
    }
  }

  /** Stops on its own for {@code why} (a shard's STOP, EXIT only if unclosed, its work stopped): leaves, reports. */
  private void leaveOnItsOwn(Throwable why, long now) {
    failure = failure != null ? failure : why; // the first reason
    if (closeRequested.compareAndSet(false, true)) {
      inputs.add(new CloseRequested(now));
    }
  }

  /** What the list and watch saw, on the loop: the coordinator's input, and each shard runner's (as its watch's). */
  private final class ViewListener implements ShardViewFeed.Listener {
    @Override
    public void observed(ShardCoordinatorInput.ViewObserved observed) {
      if (!done) {
        handOvers.follow(observed, coordinator.phase() instanceof ShardCoordinatorPhase.Member);
        inputs.add(feed.ordered() ? observed : observed.withoutMarkOf(parts.identity()));
      }
    }

    @Override
    public void arrived(ShardLeaseView.Listed listed, long arrivedNanos) {
      if (parts.leases().parse(listed.name()) instanceof ShardLeases.Kind.Shard shard) {
        Optional.ofNullable(shards.get(shard.shard()))
            .ifPresent(run -> run.runner().driver().sighted(listed.record(), arrivedNanos, listed.bare()));
      }
    }
  }

  /** A hand-over seen before the answer of the membership write it names: its runner looks again now, not at its wake. */
  private void sightedAgain(int shard) {
    view.handOverTo(parts.leases().shardLease(shard), parts.identity()).ifPresent(seen ->
        shards.get(shard).runner().driver().sighted(seen.record(), seen.changedNanos(), seen.bare()));
  }

  private void tick() {
    if (done) {
      return;
    }
    inputs.add(new Tick(ticker.read()));
    feed.checkSilence(membership != null && membershipLeading ? membership.driver().view().lastSuccessNanos()
        : Optional.empty());
    tickTimer = loop.schedule(parts.tickNanos(), () -> guarded(this::tick));
  }

  private void finish(StopCause cause) {
    done = true;
    if (cause == StopCause.SHARD_ABANDONED && failure == null) {
      failure = new IllegalStateException("a shard's stop() threw or outlived the stop timeout: its work may still "
          + "run, so this replica gave up every shard and left their Leases to expire; restart the process");
    }
    cancelTimers();
    feed.close();
    log.info("Stopped sharded runner {} ({})", parts.identity(), cause);
    if (membership != null) {
      membership.driver().requestClose(); // recontending since a loss: the stop waits for it, or it renews for ever
    }
    stopWhenIdle = true;
    if (live.isEmpty()) {
      reportStopped();
    }
  }

  private void cancelTimers() {
    mark.cancel();
    Optional.ofNullable(tickTimer).ifPresent(RunnerLoop.Timer::cancel);
  }

  /**
   * The coordinator's logic failed: it cannot be trusted to decide any more. Every runner is closed (each stops its
   * work before it releases, as its own lifecycle ensures), and the replica reports stopped once they all did.
   */
  private void failed(Throwable e) {
    draining = false;
    inputs.clear();
    if (done) {
      log.error("The sharded runner {} failed after it stopped", parts.identity(), e);
      return;
    }
    if (failure == null) {
      failure = e;
    }
    log.error("The sharded runner {} failed; closing every shard", parts.identity(), e);
    done = true;
    stopWhenIdle = true;
    closeRequested.set(true);
    terms.clear();
    feed.close();
    cancelTimers();
    live.forEach(LifecycleDriver::requestClose);
    if (live.isEmpty()) {
      reportStopped();
    } else {
      publish();
    }
  }

  /** A runner this driver started reported STOPPED. */
  private void runnerStopped(LifecycleDriver driver) {
    live.remove(driver);
    if (stopWhenIdle && live.isEmpty()) {
      reportStopped();
    }
  }

  /** The snapshot first, so whoever the count-down lets go reads the stop; then the listeners hear of it. */
  private void reportStopped() {
    publish();
    stopped.release();
    publish();
  }

  private void publish() {
    SortedMap<Integer, LeadershipTerm> owned = new TreeMap<>();
    if (!done) {
      for (Integer shard : coordinator.tokens().keySet()) {
        LeadershipTerm term = terms.get(shard);
        if (term != null) {
          owned.put(shard, term);
        }
      }
    }
    boolean hung = shards.values().stream().anyMatch(run -> run.runner().driver().view().servicesHung());
    if (membership != null) {
      membershipView = membership.driver().view();
    }
    snapshot = new Snapshot(coordinator.phase(), Collections.unmodifiableSortedMap(owned), membershipView, hung,
        feed.synced());
    if (listeners != null) {
      listeners.published(snapshot.owned(), hasStopped(), failure());
    }
  }
}
