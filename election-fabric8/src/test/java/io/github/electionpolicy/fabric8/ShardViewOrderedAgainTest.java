package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Review h-leave2: {@link ShardViewFeed#ordered} is false from a failure of the list and watch until the first change
 * after the next list reported in whole ({@link ShardLeaseSource.Sink#listed}). Production's {@link ShardLeaseSource}
 * reports {@code listed()} only for an informer's first list (its {@code start()}), never for the list fabric8's
 * informer makes on its own after a failure and its back-off (a 32nd of the retry period at first: well before the
 * next renewal is answered). So when the server's next answer comes ({@link ShardViewFeed#answered}) the informer is
 * watching again, {@link ShardViewSource.View#relist} declines, no list is ever reported, and the feed stays
 * unordered for the rest of the replica's life: every view the coordinator gets lacks the replica's own leaving mark,
 * so its leave never names a successor (its hand-overs wait out the settle bound, then are plain releases) and it
 * never lingers for an earlier leaver (which may have named it: that shard then waits out its Lease).
 */
class ShardViewOrderedAgainTest {

  private static final long MS = 1_000_000L;
  private static final long LEASE = 2_000 * MS;

  private final AtomicReference<Long> now = new AtomicReference<>(0L);
  private final AtomicReference<ShardLeaseSource.Sink> sink = new AtomicReference<>();
  private final ShardLeases leases = new ShardLeases("orders-controller", 4);
  private final AtomicBoolean watching = new AtomicBoolean(true);
  private final AtomicInteger restarts = new AtomicInteger();

  private ShardViewFeed feed() {
    RunnerLoop loop = new RunnerLoop() {
      @Override
      public void execute(Runnable task) {
        task.run();
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
    ShardViewFeed feed = new ShardViewFeed(new ShardLeaseView(leases, LEASE), leases, LEASE, LEASE, loop, now::get,
        Runnable::run, new ShardViewFeed.Listener() {
          @Override
          public void observed(ShardCoordinatorInput.ViewObserved view) {}

          @Override
          public void arrived(ShardLeaseView.Listed listed, long arrivedNanos) {}
        }, new RunnerLog(ShardViewOrderedAgainTest.class, new RunnerLog.Lane(loop, Runnable::run, "test")));
    feed.open(to -> {
      sink.set(to);
      return new ShardViewSource.View() {
        @Override
        public void close() {}

        @Override
        public boolean relist() {
          return !watching.get(); // as ShardLeaseSource: an informer watching again is not replaced
        }

        @Override
        public boolean restart() {
          restarts.incrementAndGet();
          return true;
        }
      };
    });
    return feed;
  }

  private void arrives(String name, String holder, String version) {
    LeaseRecord record = new LeaseRecord(holder, 2, Instant.EPOCH, Instant.EPOCH, 0, version);
    sink.get().changed(new ShardLeaseView.Listed(name, record, false, true), now.get());
  }

  @Test
  void aFailureTheInformerListedAfterOnItsOwnLeavesTheViewOrderedAgainOnceAListIsReported() {
    ShardViewFeed feed = feed();
    arrives(leases.memberLease("pod-a"), "pod-a", "1");
    sink.get().listed();
    arrives(leases.memberLease("pod-a"), "pod-a", "2");
    assertThat(feed.ordered()).isTrue();

    sink.get().failed(); // the watch failed; fabric8 lists again after its back-off, on its own
    watching.set(true);
    arrives(leases.memberLease("pod-b"), "pod-b", "3"); // its list: reported Lease by Lease, no listed()
    arrives(leases.memberLease("pod-a"), "pod-a", "4"); // then the watch
    feed.answered(); // the server answers this replica's next renewal
    int restartsAtAnswer = restarts.get();
    if (restartsAtAnswer > 0) {
      sink.get().listed(); // the new list and watch's list, reported in whole
    }
    for (int renewal = 5; renewal < 50; renewal++) { // renewals, a retry period apart, for a long while
      now.set(now.get() + 100 * MS);
      arrives(leases.memberLease("pod-a"), "pod-a", Integer.toString(renewal));
      feed.answered();
    }

    assertThat(feed.ordered())
        .as("the view is ordered again after a failure fabric8's informer recovered from on its own (restarts: "
            + restarts.get() + ")")
        .isTrue();
  }
}
