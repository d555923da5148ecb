package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The coordinator plans from the view the feed hands it, so that view must never be a part of a list taken for the
 * whole. fabric8's informer reports its first list one Lease at a time (members sort before shards), and a feed that
 * handed the coordinator the view after each of them made a joining replica plan from a cluster whose shards all
 * looked free: traced on the real kube-apiserver, a replica that joined while another member held three shards
 * contended for 13 of 16, won 10 free ones beyond its share of 8, and took and released them over and over until
 * the other member's Lease expired. {@link ShardCoordinatorInput.ViewObserved} now first comes once the list was
 * taken in whole; after it, every change is handed on as it comes.
 */
class ShardViewFirstListTest {

  private static final long MS = 1_000_000L;
  private static final long LEASE = 2_000 * MS;

  private final AtomicReference<Long> now = new AtomicReference<>(0L);
  private final AtomicReference<ShardLeaseSource.Sink> sink = new AtomicReference<>();
  private final ShardLeases leases = new ShardLeases("orders-controller", 4);
  private final List<ShardCoordinatorInput.ViewObserved> observed = new ArrayList<>();

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
          public void observed(ShardCoordinatorInput.ViewObserved view) {
            observed.add(view);
          }

          @Override
          public void arrived(ShardLeaseView.Listed listed, long arrivedNanos) {}
        }, new RunnerLog(ShardViewFirstListTest.class, new RunnerLog.Lane(loop, Runnable::run, "test")));
    feed.open(to -> {
      sink.set(to);
      return new ShardViewSource.View() {
        @Override
        public void close() {}

        @Override
        public boolean restart() {
          return true;
        }
      };
    });
    return feed;
  }

  private void arrives(String name, String holder) {
    LeaseRecord record = new LeaseRecord(holder, 2, Instant.EPOCH, Instant.EPOCH, 0, "1");
    sink.get().changed(new ShardLeaseView.Listed(name, record, false, true), now.get());
  }

  @Test
  void theCoordinatorFirstHearsTheViewOnceTheFirstListWasTakenInWhole() {
    ShardViewFeed feed = feed();
    arrives(leases.memberLease("pod-a"), "pod-a");
    arrives(leases.memberLease("pod-b"), "pod-b");
    arrives(leases.shardLease(0), "pod-a");
    arrives(leases.shardLease(1), "pod-a");
    assertThat(observed).as("views handed on before the list was taken in whole").isEmpty();
    assertThat(feed.synced()).isFalse();

    sink.get().listed();

    assertThat(feed.synced()).isTrue();
    assertThat(observed).hasSize(1);
    assertThat(observed.get(0).liveMembers()).isEqualTo(Set.of("pod-a", "pod-b"));
    assertThat(observed.get(0).holders()).isEqualTo(Map.of(0, "pod-a", 1, "pod-a"));
  }

  @Test
  void afterTheFirstListEveryChangeAndDeletionIsHandedOnAsItComes() {
    feed();
    arrives(leases.memberLease("pod-a"), "pod-a");
    sink.get().listed();
    arrives(leases.shardLease(2), "pod-a");
    sink.get().deleted(leases.memberLease("pod-a"), now.get());

    assertThat(observed).hasSize(3);
    assertThat(observed.get(1).holders()).isEqualTo(Map.of(2, "pod-a"));
    assertThat(observed.get(2).liveMembers()).isEmpty();
  }

  @Test
  void aListThatFoundNoLeaseIsHandedOnToo() {
    feed();
    sink.get().listed();
    assertThat(observed).hasSize(1);
    assertThat(observed.get(0).liveMembers()).isEmpty();
    assertThat(observed.get(0).holders()).isEmpty();
  }

  @Test
  void aLaterListIsNoNewStartAndHidesNothing() {
    feed();
    sink.get().listed();
    arrives(leases.memberLease("pod-a"), "pod-a");
    sink.get().listed(); // a relist after a failure: its changes were handed on as they came
    assertThat(observed).hasSize(2);
  }
}
