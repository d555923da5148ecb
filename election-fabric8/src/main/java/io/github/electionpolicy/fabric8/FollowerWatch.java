package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import java.time.Clock;

/**
 * The follower's watch of one Lease, for {@link LeaseElector}: opens it through the {@link LeaseTransport} unless
 * one runs or its backoff is not over, takes its opened, changed and closed events onto the loop, drops those of
 * a watch it stopped (its generation counts each watch), backs off after a close (a retry period, doubled per close
 * in a row, at most a lease duration), and hands what it saw to {@link LeaseProtocol} as the next input of the
 * elector's wait ({@link #nextInput}): a close first, then an open, then the newest change only.
 *
 * <p>Not thread-safe: every method runs on the runner's loop, the shared {@link RunnerLoop}; the transport's
 * callbacks only hand its events to the loop.
 */
final class FollowerWatch {

  private final LeaseTransport transport;
  private final ElectorSignals events;
  private final Ticker ticker;
  private final Clock clock;
  private final LeaseProtocol protocol;
  private final RunnerFlaw flaw;
  private final long retryPeriodNanos;
  private final long leaseDurationNanos;
  // The elector's: takes an input in at once if it waits, else at its next wait.
  private final Runnable poke;

  private LeaseTransport.Call watch;
  private int watchGeneration;
  private boolean watchOpen;
  private boolean watchOpenedPending;
  private boolean watchClosedPending;
  private WatchEvent watchEventPending;
  private int watchFailures;
  private long watchNotBefore;

  // writable: a write from the record alone keeps the Lease's metadata (LeaseProtocol.watchEvent).
  private record WatchEvent(LeaseRecord record, long arrivedNanos, boolean writable) {}

  FollowerWatch(LeaseTransport transport, ElectorSignals events, Ticker ticker, Clock clock,
      LeaseProtocol protocol, RunnerFlaw flaw, LeaseSettings settings, Runnable poke) {
    this.transport = transport;
    this.events = events;
    this.ticker = ticker;
    this.clock = clock;
    this.protocol = protocol;
    this.flaw = flaw;
    this.retryPeriodNanos = settings.retryPeriod().toNanos();
    this.leaseDurationNanos = settings.leaseDuration().toNanos();
    this.poke = poke;
    this.watchNotBefore = ticker.read();
  }

  /** Starts a watch unless one runs, is opening, or waits out its backoff, or the elector is {@code closing}. */
  void ensure(boolean closing) {
    if (watch != null || closing || ticker.read() - watchNotBefore < 0) {
      return;
    }
    int mine = ++watchGeneration;
    long openedAt = ticker.read();
    watch = transport.watch(new LeaseTransport.WatchEvents() {
      @Override
      public void opened() {
        events.onLoop(() -> watchOpened(mine));
      }

      @Override
      public void changed(LeaseRecord record) {
        long arrived = flaw == RunnerFlaw.WATCH_EVENT_DATED_AT_OPEN ? openedAt : ticker.read();
        events.onLoop(() -> watchChanged(mine, record, arrived));
      }

      @Override
      public void closed() {
        events.onLoop(() -> watchClosed(mine));
      }
    });
  }

  /** Stops the watch; the protocol hears that it closed. */
  void stop() {
    LeaseTransport.Call current = watch;
    watch = null;
    if (watchOpen) {
      watchOpen = false;
      watchClosedPending = true;
    }
    watchOpenedPending = false;
    watchEventPending = null;
    // Events of the stopped watch must not count.
    watchGeneration++;
    if (current != null) {
      current.cancel();
    }
  }

  /**
   * What another watch of the same process saw of the Lease (a sharded runner's list and watch of all its Leases),
   * arrived at {@code arrivedNanos} on the same ticker: taken in as this watch's own change would be, so a follower
   * whose own watch is not open yet still hears a release at once. One that arrived before the change waiting to be
   * taken in is dropped. {@code writable}: that watch saw the Lease bare ({@link LeaseProtocol#watchEvent}).
   */
  void sighted(LeaseRecord record, long arrivedNanos, boolean writable) {
    if (watchEventPending == null || arrivedNanos - watchEventPending.arrivedNanos() > 0) {
      watchEventPending = new WatchEvent(record, arrivedNanos, writable);
      poke();
    }
  }

  /** The protocol's step for what the watch saw since the last one, if anything: a close, an open, a change. */
  LeaseStep nextInput() {
    if (watchClosedPending) {
      watchClosedPending = false;
      return protocol.watchClosed(now());
    }
    if (watchOpenedPending) {
      watchOpenedPending = false;
      return protocol.watchOpened(now());
    }
    if (watchEventPending != null) {
      WatchEvent event = watchEventPending;
      watchEventPending = null;
      return protocol.watchEvent(now(), event.arrivedNanos(), event.record(), event.writable());
    }
    return null;
  }

  private void watchOpened(int generation) {
    if (generation == watchGeneration && watch != null) {
      watchOpen = true;
      watchOpenedPending = true;
      watchFailures = 0;
      poke();
    }
  }

  private void watchChanged(int generation, LeaseRecord record, long arrivedNanos) {
    if (generation == watchGeneration && watch != null) {
      watchEventPending = new WatchEvent(record, arrivedNanos, false); // only the newest waits to be taken in
      poke();
    }
  }

  private void watchClosed(int generation) {
    if (generation == watchGeneration && watch != null) {
      watch = null;
      if (watchOpen) {
        watchOpen = false;
        watchClosedPending = true;
      }
      watchOpenedPending = false;
      long backoff = Math.min(leaseDurationNanos, retryPeriodNanos << Math.min(watchFailures, 20));
      watchFailures++;
      watchNotBefore = ticker.read() + backoff;
      poke();
    }
  }

  private void poke() {
    poke.run();
  }

  private Moment now() {
    return new Moment(ticker.read(), clock.instant());
  }
}
