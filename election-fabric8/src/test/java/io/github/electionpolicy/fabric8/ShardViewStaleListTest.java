package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Review h-gate's suspicion 6: the source hands each report to the driver's loop, so a list of a list and watch may
 * wait there while the loop replaces that list and watch (here, a restart after a silence). Taken in as if it were
 * the new one's, it made the feed count the new list's first changes as the server's order ({@link
 * ShardViewFeed#ordered}) while that list was still being reported, Lease by Lease: a leaver could then name as its
 * successor a member that had left. The loop here runs its tasks only when the test says, so the interleaving is
 * exact.
 */
class ShardViewStaleListTest {

  private static final long MS = 1_000_000L;
  private static final long LEASE = 2_000 * MS;
  private static final long SILENCE = 1_000 * MS;

  private final AtomicReference<Long> now = new AtomicReference<>(0L);
  private final AtomicReference<ShardLeaseSource.Sink> sink = new AtomicReference<>();
  private final ShardLeases leases = new ShardLeases("orders-controller", 4);
  private final AtomicInteger generation = new AtomicInteger(1);
  private final Queue<Runnable> queued = new ArrayDeque<>();

  private ShardViewFeed feed() {
    RunnerLoop loop = new RunnerLoop() {
      @Override
      public void execute(Runnable task) {
        queued.add(task);
      }

      @Override
      public Timer schedule(long delayNanos, Runnable task) {
        return () -> { };
      }

      @Override
      public boolean inLoop() {
        return true;
      }

      @Override
      public java.util.concurrent.Executor logWriter() {
        return Runnable::run;
      }
    };
    ShardViewFeed feed = new ShardViewFeed(new ShardLeaseView(leases, LEASE), leases, LEASE, SILENCE, loop, now::get,
        queued::add, new ShardViewFeed.Listener() {
          @Override
          public void observed(ShardCoordinatorInput.ViewObserved view) {}

          @Override
          public void arrived(ShardLeaseView.Listed listed, long arrivedNanos) {}
        }, new RunnerLog(ShardViewStaleListTest.class, new RunnerLog.Lane(loop, Runnable::run, "test")));
    feed.open(to -> {
      sink.set(to);
      return new ShardViewSource.View() {
        @Override
        public void close() {}

        @Override
        public boolean restart() {
          generation.incrementAndGet();
          return true;
        }

        @Override
        public int generation() {
          return generation.get();
        }
      };
    });
    return feed;
  }

  private void runLoop() {
    for (Runnable task = queued.poll(); task != null; task = queued.poll()) {
      task.run();
    }
  }

  private void arrives(String name, String holder, String version) {
    LeaseRecord record = new LeaseRecord(holder, 2, Instant.EPOCH, Instant.EPOCH, 0, version);
    sink.get().changed(new ShardLeaseView.Listed(name, record, false, true), now.get());
  }

  @Test
  void aListOfAListAndWatchReplacedWhileItWaitedForTheLoopIsNotTakenAsTheNewOnes() {
    ShardViewFeed feed = feed();
    runLoop();
    // The first list and watch's list is slow: the membership Lease is renewed meanwhile, nothing is heard.
    now.set(5_000 * MS);
    feed.checkSilence(Optional.of(4_000 * MS)); // the first tick only notes the renewal
    // Its list comes in at last (an empty namespace: nothing but the list), as the loop's next tick restarts it.
    sink.get().listed(1);
    feed.checkSilence(Optional.of(4_000 * MS));
    assertThat(generation.get()).as("restarted after the silence").isEqualTo(2);
    runLoop();

    // The new list and watch's list is reported Lease by Lease: its first change, not yet the whole.
    arrives(leases.memberLease("pod-b"), "pod-b", "7");
    runLoop();
    assertThat(feed.ordered()).as("ordered while the new list is only partly reported").isFalse();

    sink.get().listed(2);
    arrives(leases.memberLease("pod-a"), "pod-a", "8"); // the watch's first event after the list
    runLoop();
    assertThat(feed.ordered()).as("ordered once the new list was taken in and the watch reports").isTrue();
  }
}
