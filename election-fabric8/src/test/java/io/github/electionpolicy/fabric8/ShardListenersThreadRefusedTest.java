package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A {@link ShardListener} is called "after each change of the shards this replica owns" and "once, after the replica
 * stopped". The shared user-code pool refuses a task when no thread can be started (SharedPools: an "unable to create
 * native thread" reaches the caller as a RejectedExecutionException); every other lane of the library keeps such a task
 * queued and hands it over again until it runs (RunnerCallbacks.retryHandOver: "a refused stop is never dropped";
 * RunnerLog's lane retries too). ShardListeners' lane is never retried: once the pool refused it a single time, the
 * lane stays "running" with its tasks queued, and every later call, the stop included, is silently lost for the life
 * of the replica.
 */
class ShardListenersThreadRefusedTest {

  @RegisterExtension
  final MockApi api = new MockApi();

  /** The shared pool, refusing the first hand-over of the sharded runner's listener lane, as with no thread to be had. */
  static final class RefusesTheListenerLaneOnce implements Executor {
    final AtomicInteger refused = new AtomicInteger();

    @Override
    public void execute(Runnable task) {
      if (task instanceof CallbackLane.Run run && laneName(run.lane()).startsWith("election-listeners[shards:")
          && refused.compareAndSet(0, 1)) {
        throw new RejectedExecutionException("no thread could be started for the call: java.lang.OutOfMemoryError: "
            + "unable to create native thread");
      }
      SharedPools.userCode().execute(task);
    }

    private static String laneName(CallbackLane lane) {
      try {
        java.lang.reflect.Field name = CallbackLane.class.getDeclaredField("threadName");
        name.setAccessible(true);
        return (String) name.get(lane);
      } catch (ReflectiveOperationException e) {
        throw new AssertionError(e);
      }
    }
  }

  @Test
  void aListenerWhoseThreadWasRefusedOnceStillHearsTheOwnedShardsAndTheStop() {
    List<Set<Integer>> told = new CopyOnWriteArrayList<>();
    List<Optional<Throwable>> stops = new CopyOnWriteArrayList<>();
    RefusesTheListenerLaneOnce pool = new RefusesTheListenerLaneOnce();
    ShardedRunner a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").build())
        .shards(2)
        .service(ShardService.of((shard, term) -> { }, shard -> { }))
        .userCode(pool)
        .listener(new ShardListener() {
          @Override
          public void ownedShardsChanged(SortedMap<Integer, LeadershipTerm> owned) {
            told.add(Set.copyOf(owned.keySet()));
          }

          @Override
          public void stopped(Optional<Throwable> failure) {
            stops.add(failure);
          }
        })
        .start();
    try {
      Await.until("both shards owned", () -> a.ownedShards().size() == 2, Duration.ofSeconds(15), a::toString);
      assertThat(pool.refused.get()).as("the listener lane's hand-overs the pool refused").isEqualTo(1);
      Await.until("the listener told of both shards", () -> !told.isEmpty()
          && told.get(told.size() - 1).equals(Set.of(0, 1)), Duration.ofSeconds(10), () -> "told " + told);
    } finally {
      a.close();
    }
    Await.until("the stop told once", () -> stops.size() == 1, Duration.ofSeconds(10), () -> "stops " + stops);
  }
}
