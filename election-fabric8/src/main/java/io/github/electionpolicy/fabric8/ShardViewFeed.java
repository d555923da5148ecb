package io.github.electionpolicy.fabric8;

import java.util.OptionalLong;
import java.util.function.Consumer;

/**
 * A sharded replica's view of its controller's Leases, fed on the driver's loop: it opens the one list and watch
 * ({@link ShardViewSource}), takes each change into the {@link ShardLeaseView}, hands the coordinator the view once
 * the first list was taken in whole, then after each change and when the next held Lease expires with no event (a
 * timer), tells the driver of each Lease as it
 * arrived (for the shard runners' {@code sighted}), and logs one ERROR if the list has not listed the Leases within a
 * lease duration. When the list and watch failed and the API server then answers a Lease call of the replica's
 * ({@link #answered}), it has the list and watch list again at once, not at its back-off's next try: once per
 * failure, until that list was taken in. After {@link #close} it takes nothing in and leaves no timer behind.
 *
 * <p>Not thread-safe: the driver's loop; the source's callbacks only hand their events to it.
 */
final class ShardViewFeed {

  /** Where the feed's news goes, on the loop. */
  interface Listener {
    /** The view changed, or a Lease of it expired. */
    void observed(ShardCoordinatorInput.ViewObserved view);

    /** A Lease arrived as {@code listed} at {@code arrivedNanos}. */
    void arrived(ShardLeaseView.Listed listed, long arrivedNanos);
  }

  private final ShardLeaseView view;
  private final ShardLeases leases;
  private final long leaseDurationNanos;
  private final long silenceNanos;
  private final RunnerLoop loop;
  private final Ticker ticker;
  private final Consumer<Runnable> onLoop;
  private final Listener listener;
  private final RunnerLog log;
  private final ShardDriverFlaw flaw;
  private ShardViewSource.View source;
  private RunnerLoop.Timer expiryTimer;
  private long expiryAt;
  private RunnerLoop.Timer syncCheck;
  private boolean synced;
  // The list and watch failed and has not listed since: the next answer of the server lists it again at once.
  private boolean relistDue;
  // That relist was asked for and has not listed yet: a failure meanwhile asks for no other (a list that keeps
  // failing while Lease calls are answered, a Role without list, gets one list more per failure, not one per answer).
  // Its list left unanswered is silence as any other (checkSilence), counted from the relist.
  private boolean relisting;
  private boolean closed;
  // False from a failure or a restart until the first change reported after the next list (ordered()).
  private boolean ordered = true;
  private boolean listedSinceDisorder = true;
  // When the list and watch last reported anything (a change, a deletion, a list, a failure), or was opened, listed
  // again (answered) or restarted.
  private long heardNanos;
  // The restarts by checkSilence since the last list taken in: each waits twice the one before (up to
  // MAX_WAIT_DOUBLINGS), so a list slower than the bound is not restarted, and sent anew, for ever.
  private int unlistedRestarts;
  // What checkSilence was given at the driver's previous tick: a renewal already answered then, whose change a live
  // watch has had a tick to deliver (empty while the membership runner did not lead).
  private java.util.Optional<Long> renewedAtLastTick = java.util.Optional.empty();

  /** @param onLoop runs a task of the driver's on its loop (and steps the coordinator after it) */
  ShardViewFeed(ShardLeaseView view, ShardLeases leases, long leaseDurationNanos, long silenceNanos, RunnerLoop loop,
      Ticker ticker, Consumer<Runnable> onLoop, Listener listener, RunnerLog log) {
    this(view, leases, leaseDurationNanos, silenceNanos, loop, ticker, onLoop, ShardDriverFlaw.NONE, listener, log);
  }

  /** As above, with a deliberate defect of the simulation's broken variants ({@link ShardDriverFlaw#NONE}: none). */
  ShardViewFeed(ShardLeaseView view, ShardLeases leases, long leaseDurationNanos, long silenceNanos, RunnerLoop loop,
      Ticker ticker, Consumer<Runnable> onLoop, ShardDriverFlaw flaw, Listener listener, RunnerLog log) {
    this.flaw = flaw;
    this.view = view;
    this.leases = leases;
    this.leaseDurationNanos = leaseDurationNanos;
    this.silenceNanos = silenceNanos;
    this.loop = loop;
    this.ticker = ticker;
    this.onLoop = onLoop;
    this.listener = listener;
    this.log = log;
  }

  /**
   * Opens the list and watch, unless it is open or closed already; on the loop. The driver opens it once its membership
   * runner may write (its RBAC preflight let it contend), so a replica the preflight stops sends no list: not at
   * start, beside the preflight, where a Role without {@code list} had the server refuse the list first (and
   * fabric8's informer log that at ERROR) before the runner's own message. With the preflight the first list goes
   * out one round trip after the start (its {@code SelfSubjectRulesReview}; two when the access reviews decide).
   */
  void open(ShardViewSource from) {
    if (source != null || closed) {
      return;
    }
    heardNanos = ticker.read();
    source = from.open(new ShardLeaseSource.Sink() {
      @Override
      public void changed(ShardLeaseView.Listed listed, long arrivedNanos) {
        onLoop.accept(() -> {
          if (!closed) {
            view.changed(listed, arrivedNanos);
            heardNanos = ticker.read();
            ordered |= listedSinceDisorder; // a change after the list's last: the watch's, in the server's order
            listener.arrived(listed, arrivedNanos);
            synced |= flaw == ShardDriverFlaw.SYNCED_AT_FIRST_LEASE;
            observeIfListed();
          }
        });
      }

      @Override
      public void deleted(String name, long arrivedNanos) {
        onLoop.accept(() -> {
          if (!closed) {
            view.deleted(name);
            heardNanos = ticker.read();
            observeIfListed();
          }
        });
      }

      @Override
      public void failed() {
        onLoop.accept(() -> {
          disordered();
          relistDue = !closed && !relisting;
          // fabric8 reported it, and lists again after its back-off: not the silence checkSilence is for.
          heardNanos = ticker.read();
        });
      }

      @Override
      public void listed(int generation) {
        onLoop.accept(() -> {
          // A list of a list and watch that a relist or a restart replaced while this waited for the loop: not the
          // one the feed waits for, whose first changes may already be taken in (review h-gate's suspicion 6).
          if (source == null || source.generation() == generation) {
            listedNow();
          }
        });
      }

      @Override
      public void listed() {
        onLoop.accept(this::listedNow);
      }

      private void listedNow() {
        boolean first = !synced;
        synced = true;
        listedSinceDisorder = true;
        heardNanos = ticker.read();
        relistDue = false;
        relisting = false;
        unlistedRestarts = 0;
        if (first && !closed) {
          observe(); // the first whole list: the coordinator's first view
        }
      }
    });
    syncCheck = loop.schedule(leaseDurationNanos, () -> onLoop.accept(() -> {
      if (!synced && !closed) {
        log.error(ShardLeaseSource.NOT_LISTED, ShardLeases.LABEL, leases.labelValue(), leaseDurationNanos / 1_000_000);
      }
    }));
  }

  /** Whether the list and watch failed since it last listed, and an answer of the server would list it again. */
  boolean relistDue() {
    return relistDue;
  }

  /**
   * The API server answered a Lease call of this replica's (a renewal, a take, a 409): it is reachable. If the list
   * and watch failed since it last listed, it lists and watches again now: the view is listed about one round trip
   * after the server is back, not at the back-off's next try (up to a retry period on), which a replica started
   * during an outage would wait for with a view that counts a departed member as live for a lease duration from it.
   */
  void answered() {
    if (relistDue && !closed && source != null) {
      relistDue = false;
      // fabric8's informer lists again on its own after its back-off (a 32nd of the retry period at first), and
      // reports no listed() for that list: one watching again already is restarted, so that a list is reported in
      // whole and the view is ordered again (ordered()), not unordered for good (review h-leave2).
      relisting = source.relist() || (!ordered && source.restart());
      if (relisting) {
        heardNanos = ticker.read(); // its list's silence counts from now (checkSilence), not from before the failure
      }
    }
  }

  /**
   * On the loop, at each of the driver's ticks: a list and watch that reported nothing for the silence bound
   * ({@code silenceNanos}: three retry periods or half a lease duration, the longer) since the last thing it reported,
   * or since it was opened if its first list never came, or since it was listed again ({@link #answered}) or
   * restarted if that list never came, while this replica's membership Lease was renewed for half that bound after
   * the last thing it reported ({@code renewedNanos}: when the membership runner, leading, last sent a Lease call
   * that succeeded; empty while it does not lead; the one counted is the value given at the previous tick, a renewal
   * answered at least a tick ago), is listed and watched again through a new one ({@link
   * ShardViewSource.View#restart}), whether or not it counts itself as watching. Each renewal changes a Lease the
   * view watches, so a live view hears one every retry period, each within a round trip; unheard for that long, they
   * mean a watch that is open to fabric8 but delivers nothing: a connection the server or a proxy stopped answering,
   * or a reconnect that never completed (a refused one, seen with fabric8's mock server), or a list left unanswered
   * (fabric8 7.x, under load), after which fabric8 neither reports a failure nor tries again. Without this, the view
   * would not change for as long (no member joining or leaving, no shard released); with it, it is at most the
   * bound, a retry period (two ticks) and a list's round trip behind. At most once per bound of silence, and while no
   * list came since the last restart, each restart waits twice as long as the one before, up to eight bounds (a list
   * slower than the bound, which each restart sends anew, then still comes); not while a failure is known (the
   * back-off and the early relist at the server's next answer take care of that; a failure is heard, as fabric8 lists
   * again after it). A restart a slow watch did not need costs one list.
   */
  void checkSilence(java.util.Optional<Long> renewedNanos) {
    // The renewal that counts is the one known at the previous tick: answered then, its change has had a tick to
    // arrive. The latest may have been answered a moment ago, its event still on its way: after a spell in which this
    // replica wrote nothing (its requests lost, the server's writes failing, its loop stalled), the first renewal
    // would otherwise restart a live watch (a list, and a WARN that blames the watch).
    java.util.Optional<Long> answered = renewedAtLastTick;
    renewedAtLastTick = renewedNanos;
    // A first list that never came counts too: heard from the open on, it is silence all the same (its request left
    // unanswered, fabric8 neither fails it nor tries again), and a replica that never lists never plans. So does the
    // list of a relist or a restart (relisting), heard from its start on: one left unanswered would otherwise leave
    // the view as it was for good.
    if (source == null || closed || relistDue || renewedNanos.isEmpty() || answered.isEmpty()) {
      return;
    }
    long now = ticker.read();
    long bound = silenceNanos << Math.min(unlistedRestarts, MAX_WAIT_DOUBLINGS);
    if (now - heardNanos < bound || answered.get() - heardNanos < silenceNanos / 2) {
      return;
    }
    boolean unlisted = relisting || !synced; // a list is what never came, not (only) a watch's events
    heardNanos = now;
    if (source.restart()) {
      disordered();
      relisting = true;
      unlistedRestarts++;
      if (unlisted) {
        log.warn(UNANSWERED, ShardLeases.LABEL, leases.labelValue(), bound / 1_000_000);
      } else {
        log.warn(SILENT, ShardLeases.LABEL, leases.labelValue(), bound / 1_000_000);
      }
    }
  }

  /**
   * Whether the view takes in the server's changes in the order it stored them: not from a failure of the list and
   * watch or its restart on, while the list that follows is reported (one Lease at a time, in name order, and its
   * deletions last, some maybe after {@link ShardLeaseSource.Sink#listed}), until the first change reported after
   * that list, a watch event. A view taken meanwhile may show a Lease as it is now beside another as it was before the
   * failure; a leaver names no successor from one (review h-leave, {@code SimulationShardingLeaveNamedFromARelist}).
   * A list fabric8's informer makes on its own after a 410 Gone counts as such a failure: the source reports one
   * before its first change ({@link ShardLeaseSource}'s {@code report}).
   */
  boolean ordered() {
    return ordered;
  }

  private void disordered() {
    ordered = false;
    listedSinceDisorder = false;
  }

  /** How many times a restart's wait doubles while no list comes: up to eight bounds of silence. */
  static final int MAX_WAIT_DOUBLINGS = 3;

  /** The WARN of a list and watch restarted after a silence: label, value, milliseconds. */
  static final String SILENT = "The watch of the Leases labelled {}={} delivered nothing for {} ms, though this "
      + "replica's own renewals change them: listing and watching them again";

  /** The WARN of a list and watch restarted after its list went unanswered: label, value, milliseconds. */
  static final String UNANSWERED = "The list of the Leases labelled {}={} was not answered in {} ms, though this "
      + "replica's own renewals are: listing and watching them again";

  /** Whether the list and watch listed the Leases once, in full. */
  boolean synced() {
    return synced;
  }

  /**
   * The coordinator hears of a change only once the first list was taken in whole: a part of it (the Leases listed
   * first, members before shards) would look like a cluster with fewer members and every shard listed later free.
   */
  private void observeIfListed() {
    if (synced) {
      observe();
    }
  }

  private void observe() {
    long now = ticker.read();
    listener.observed(view.view(now));
    OptionalLong next = view.nextExpiry(now);
    if (next.isPresent() && (expiryTimer == null || next.getAsLong() != expiryAt)) {
      if (expiryTimer != null) {
        expiryTimer.cancel();
      }
      expiryAt = next.getAsLong();
      expiryTimer = loop.schedule(Math.max(0, expiryAt - now), () -> onLoop.accept(() -> {
        expiryTimer = null;
        if (!closed) {
          observe();
        }
      }));
    }
  }

  /** Closes the list and watch and cancels the timers; nothing is taken in after. */
  void close() {
    closed = true;
    for (RunnerLoop.Timer timer : new RunnerLoop.Timer[] {expiryTimer, syncCheck}) {
      if (timer != null) {
        timer.cancel();
      }
    }
    if (source != null) {
      try {
        source.close();
      } catch (Exception e) {
        log.warn("Closing the list and watch of {} failed", leases.labelValue(), e);
      }
      source = null;
    }
  }
}
