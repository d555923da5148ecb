package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No work for a shard starts after the replica handed it over, even a start already past its term check (ShardWork
 * refuses it: {@code ShardWork.refuseStarts}). Finding h-rev4-1 of h-leavehold (6523f7b), red before: on a leave, a shard runner whose work "does not run" (ShardWork.mayRun() false)
 * is closed at once, on the premise that its term then ends before its start begins, so that a queued start starts
 * nothing (ServiceSequence checks the term). But a start that is already on its callback thread may have passed
 * ServiceSequence.startAll's term check and not yet entered ShardWork.start (where mayRun is counted): the loop then
 * reads mayRun() false, closes the runner at once (the term ends), and the start goes on: ShardService.start runs after
 * close(), for a shard the replica already handed over, with an ended term. Real threads: the callback thread is held
 * between the two by a ticker that blocks inside that very isValid() call (after its ended-flag read) on shard 0's
 * callback thread, released once the close has ended the term. No sleep: latches and Await.
 */
class NoShardStartAfterItsHandOverTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  @Test
  void noShardWorkStartsAfterCloseWhenTheStartIsBetweenItsTermCheckAndShardWork() throws Exception {
    CountDownLatch inCheck = new CountDownLatch(1);
    CountDownLatch letGo = new CountDownLatch(1);
    AtomicBoolean armed = new AtomicBoolean(true);
    Ticker system = Ticker.system();
    Ticker holding = () -> {
      if (armed.get() && Thread.currentThread().getName().contains("shard-0")
          && inStartAllsTermCheckBeforeAService() && armed.compareAndSet(true, false)) {
        inCheck.countDown();
        try {
          letGo.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return system.read();
    };
    AtomicBoolean closeCalled = new AtomicBoolean();
    List<String> startsAfterClose = new CopyOnWriteArrayList<>();
    ShardedRunner a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").build())
        .shards(1)
        .ticker(holding)
        .service(ShardService.of((shard, term) -> {
          if (closeCalled.get()) {
            startsAfterClose.add("shard " + shard + " started after close(), term valid " + term.isValid());
          }
        }, shard -> { }))
        .start();
    Thread closer = null;
    try {
      assertThat(inCheck.await(15, TimeUnit.SECONDS)).as("shard 0's start reached its term check").isTrue();
      // Now shard 0's runner leads, its start is on the callback thread past the term's ended-flag read, and
      // ShardWork has not counted it yet.
      LeadershipTerm term = a.ownedShards().get(0);
      assertThat(term).as("shard 0 owned: " + a).isNotNull();
      closeCalled.set(true);
      closer = new Thread(a::close, "closer");
      closer.start();
      // The leave's hand-over finds shard 0's work not running and closes its runner at once: its term ends.
      Await.until("shard 0's term ended by the close", () -> !term.isValid(), Duration.ofSeconds(15), a::toString);
      letGo.countDown();
      closer.join(TimeUnit.SECONDS.toMillis(20));
      assertThat(closer.isAlive()).as("close() returned").isFalse();
      assertThat(startsAfterClose).as("ShardService.start calls after close()").isEmpty();
    } finally {
      letGo.countDown();
      armed.set(false);
      a.close();
      if (closer != null) {
        closer.join(TimeUnit.SECONDS.toMillis(20));
      }
    }
  }

  /** Whether this ticker read is LeadershipTerm.isValid's, by ServiceSequence.startAll before a service's start. */
  private static boolean inStartAllsTermCheckBeforeAService() {
    return StackWalker.getInstance().walk(frames -> {
      List<StackWalker.StackFrame> list = frames.limit(6).toList();
      boolean viaIsValid = list.stream().anyMatch(f -> f.getClassName().equals(LeadershipTerm.class.getName())
          && f.getMethodName().equals("isValid"));
      // startAll's first isValid is its loop's, before a service's start; its last one is after the loop, which a
      // runner without services (the membership's) also reaches: only the loop's has a service to start after it.
      return viaIsValid && list.stream().anyMatch(f -> f.getClassName().equals(ServiceSequence.class.getName())
          && f.getMethodName().equals("startAll") && f.getLineNumber() < LOOP_END_LINE);
    });
  }

  /** The line of ServiceSequence.startAll after its loop ("int started = running.size()" after the for). */
  private static final int LOOP_END_LINE = 169;
}
