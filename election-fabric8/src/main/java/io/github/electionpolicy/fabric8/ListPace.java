package io.github.electionpolicy.fabric8;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * The pace of the lists an informer of the library's own sends (the sharded runner's list and watch of its Leases,
 * through {@link DerivedClients#forInformer}). fabric8's informer starts its back-off again from its first interval
 * after every list and watch that opened, however soon the watch ended: a server that ends every watch at once (a
 * 410 Gone as its first event) would get a list every first interval (a 32nd of the retry period) for as long as it
 * does. So a list that comes less than twice the cap after the one before is held until the pace has passed since
 * that one, the pace doubling from the first interval up to the cap with each such list; a list that comes later
 * (its watch stayed open at least about a retry period) goes out at once and starts the pace again. No list is held
 * past the cap after the one before, so a view whose server answers again is still listed within a retry period; and
 * lists that fail in a row from a fresh pace (an outage) are not held at all: fabric8's own back-off after each is
 * as long as the pace.
 *
 * <p>Thread-safe: {@link #send} may be called from any thread; a held list, and one asked for on the loop, is sent
 * from a worker ({@link SharedPools#handOver()}, as a Lease request: its interceptors may block), never from the
 * loop.
 */
final class ListPace {

  private final long firstNanos;
  private final long capNanos;
  private final Ticker ticker;
  private final RunnerLoop loop;
  private final Executor handOver;
  // The lists held, each with its timer (NOT_YET until it is scheduled).
  private final Map<CompletableFuture<?>, RunnerLoop.Timer> held = new ConcurrentHashMap<>();
  private static final RunnerLoop.Timer NOT_YET = () -> { };

  // Guarded by this.
  private boolean any;
  private long lastNanos;
  private long paceNanos;
  private boolean closed;
  // Counts the restarts: a list asked for before the last one is dropped on its way to a worker.
  private long epoch;

  /** Lists paced from {@code firstNanos}, doubling, up to {@code capNanos}. */
  ListPace(long firstNanos, long capNanos, Ticker ticker, RunnerLoop loop, Executor handOver) {
    if (firstNanos <= 0 || capNanos < firstNanos) {
      throw new IllegalArgumentException("first " + firstNanos + " ns, cap " + capNanos + " ns");
    }
    this.firstNanos = firstNanos;
    this.capNanos = capNanos;
    this.ticker = ticker;
    this.loop = loop;
    this.handOver = handOver;
  }

  /** For the informer of {@link DerivedClients#forInformer}: from {@code firstMillis} up to 32 times that. */
  static ListPace forInformer(int firstMillis) {
    long first = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(firstMillis);
    return new ListPace(first, first * ShardLeaseSource.BACKOFF_CAP_FACTOR, Ticker.system(), RunnerLoop.shared(),
        SharedPools.handOver());
  }

  /** How long a list asked for at {@code now} waits; the list counts as sent once it has. */
  synchronized long admit(long now) {
    long delay = 0;
    if (!any || now - lastNanos >= 2 * capNanos) {
      paceNanos = firstNanos;
    } else {
      delay = Math.max(0, lastNanos + paceNanos - now);
      paceNanos = Math.min(capNanos, paceNanos * 2);
    }
    any = true;
    lastNanos = now + delay;
    return delay;
  }

  /**
   * Sends the list with {@code send}, at once or once the pace allows; one asked for on the loop (a relist's: its new
   * informer's {@code start()} lists from the calling thread) goes from a worker too, never from the loop. A list
   * still held when the client closes, or still on its way to a worker, is never sent and never answered: the
   * informer stopped first (its source closes it before its client), and an answer, a failure included, would only
   * have it log at ERROR that its list failed. So is one held or on its way when the pace {@link #restart}s: its
   * informer is the one replaced.
   */
  <T> CompletableFuture<T> send(Supplier<CompletableFuture<T>> send) {
    long delay = admit(ticker.read());
    if (delay == 0 && !loop.inLoop()) {
      return send.get();
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    long asked;
    synchronized (this) {
      if (closed) {
        return result;
      }
      asked = epoch;
      if (delay > 0) {
        held.put(result, NOT_YET);
      }
    }
    if (delay == 0) {
      handOver(result, send, asked);
      return result;
    }
    RunnerLoop.Timer timer = loop.schedule(delay, () -> {
      if (held.remove(result) == null) {
        return; // cancelled or closed meanwhile
      }
      handOver(result, send, asked);
    });
    if (held.replace(result, NOT_YET, timer)) {
      // Cancelled by its caller: the timer goes with it (after it ran, a no-op).
      result.whenComplete((answer, failure) -> {
        if (result.isCancelled() && held.remove(result) != null) {
          timer.cancel();
        }
      });
    } else {
      timer.cancel(); // closed meanwhile (or already sent, then a no-op)
    }
    return result;
  }

  /** Sends the list from a worker, unless the pace was closed or restarted since it was asked for ({@code asked}). */
  private <T> void handOver(CompletableFuture<T> result, Supplier<CompletableFuture<T>> send, long asked) {
    try {
      handOver.execute(() -> {
        if (dropped(asked) || result.isDone()) {
          return; // closed or restarted on its way here, or cancelled by its caller
        }
        try {
          send.get().whenComplete((answer, failure) -> {
            if (failure != null) {
              result.completeExceptionally(failure);
            } else {
              result.complete(answer);
            }
          });
        } catch (Throwable failure) {
          if (!dropped(asked)) { // a client closed meanwhile refuses it: no answer, as for a held list
            result.completeExceptionally(failure);
          }
        }
      });
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(e);
    }
  }

  /** Whether the pace was closed, or restarted, since a list was asked for at {@code asked}. */
  private synchronized boolean dropped(long asked) {
    return closed || epoch != asked;
  }

  /**
   * Starts the pace again, so that the next list goes out at once, and drops the lists still held, with their timers
   * (as {@link #close} does): for {@link ShardLeaseSource#relist}, whose new informer replaces the one that asked for
   * them. The relist is already bounded (once per failure of the list and watch), and a list it asks for must not
   * wait for the pace the failures before it built up: that would be the back-off's next try it cuts short.
   */
  void restart() {
    synchronized (this) {
      any = false;
      epoch++;
    }
    dropHeld();
  }

  /** Drops the lists still held, with their timers: the client closed, and none of them goes out. */
  void close() {
    synchronized (this) {
      closed = true;
    }
    dropHeld();
  }

  private void dropHeld() {
    for (CompletableFuture<?> list : held.keySet()) {
      RunnerLoop.Timer timer = held.remove(list);
      if (timer != null) {
        timer.cancel(); // NOT_YET: send() cancels it once scheduled, finding it gone
      }
    }
  }
}
