package io.github.electionpolicy.josdk;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * When a {@link LaneExecutor} feeds its pool again after the pool refused a task handed over from a thread that is not
 * the pool's (the task waits again in its lane): soon, on a thread of the JDK's, none of JOSDK's monitors held; a
 * millisecond after the first refusal, twice as long after each next one in a row (at most 64 ms), so that a pool that
 * stays full is not polled a thousand times a second; one at a time, whatever number of refusals it feeds again; and a
 * millisecond again after each hand-over the pool took.
 *
 * <p>Thread-safe: an atomic flag and a volatile delay; a race of two refusals only makes one of them wait as long as
 * the other.
 */
final class Refeeds {

  private final Runnable feed;
  // The delay of the next feed: 1 ms again after each hand-over the pool took.
  private volatile long refeedMillis = 1;
  // Whether a feed is scheduled and has not begun: one at a time, however many hand-overs the pool refuses
  // meanwhile (each refused task waits in its lane, where that one feeds it), not one more for each.
  private final AtomicBoolean refeedScheduled = new AtomicBoolean();

  /** Runs {@code feed} when it feeds again. */
  Refeeds(Runnable feed) {
    this.feed = feed;
  }

  /** A hand-over the pool refused: schedules a feed, unless one is scheduled that has not begun. */
  void refused() {
    if (!refeedScheduled.compareAndSet(false, true)) {
      return; // the one scheduled feeds this refusal's task too: it was put back before this look
    }
    long delay = refeedMillis; // a race of two refusals only makes one of them wait as long as the other
    refeedMillis = Math.min(64, delay * 2);
    try {
      CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS).execute(() -> {
        refeedScheduled.set(false); // before the feed: a refusal from now on schedules the next one
        feed.run();
      });
    } catch (RuntimeException | Error notScheduled) { // no thread for the timer: the next refusal tries again
      refeedScheduled.set(false);
      throw notScheduled;
    }
  }

  /** A hand-over the pool took: the next refusal's feed is a millisecond later again. */
  void taken() {
    if (refeedMillis != 1) {
      refeedMillis = 1;
    }
  }
}
