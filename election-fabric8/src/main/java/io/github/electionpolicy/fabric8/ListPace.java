package io.github.electionpolicy.fabric8;

import java.util.Set;
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
 * (its watch stayed open at least about a retry period) goes out at once and starts the pace again. A list after a
 * failed one is never held: fabric8's own back-off after a failure is at least the pace.
 *
 * <p>Thread-safe: {@link #send} may be called from any thread; a held list is sent from a worker ({@link
 * SharedPools#handOver()}, as a Lease request: its interceptors may block), never from the loop.
 */
final class ListPace {

  private final long firstNanos;
  private final long capNanos;
  private final Ticker ticker;
  private final RunnerLoop loop;
  private final Executor handOver;
  private final Set<CompletableFuture<?>> held = ConcurrentHashMap.newKeySet();

  // Guarded by this.
  private boolean any;
  private long lastNanos;
  private long paceNanos;
  private boolean closed;

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

  /** Sends the list with {@code send}, at once or once the pace allows. */
  <T> CompletableFuture<T> send(Supplier<CompletableFuture<T>> send) {
    long delay = admit(ticker.read());
    if (delay == 0) {
      return send.get();
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    held.add(result);
    synchronized (this) {
      if (closed) {
        held.remove(result);
        result.completeExceptionally(new IllegalStateException("the informer's client was closed"));
        return result;
      }
    }
    RunnerLoop.Timer timer = loop.schedule(delay, () -> {
      try {
        handOver.execute(() -> {
          if (!held.remove(result)) {
            return; // cancelled or closed meanwhile
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
            result.completeExceptionally(failure);
          }
        });
      } catch (RejectedExecutionException e) {
        held.remove(result);
        result.completeExceptionally(e);
      }
    });
    // Cancelled, or failed by the close: the timer goes with it (after it ran, a no-op).
    result.whenComplete((answer, failure) -> {
      held.remove(result);
      timer.cancel();
    });
    return result;
  }

  /** Fails the lists still held: the client closed, and no list goes out after. */
  void close() {
    synchronized (this) {
      closed = true;
    }
    for (CompletableFuture<?> list : held.toArray(new CompletableFuture<?>[0])) {
      if (held.remove(list)) {
        list.completeExceptionally(new IllegalStateException("the informer's client was closed"));
      }
    }
  }
}
