package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

/**
 * A lane keeps what the pool refused: the tasks stay queued in order and run once a retry is accepted, and the
 * lane counts as busy meanwhile. Runs the lane on the calling thread (an executor that runs inline or refuses).
 */
class CallbackLaneTest {

  private final List<String> ran = new ArrayList<>();
  private int refusals;
  private final Executor inlineUnlessRefusing = task -> {
    if (refusals > 0) {
      refusals--;
      throw new RejectedExecutionException("simulated: no thread");
    }
    task.run();
  };
  private final CallbackLane lane = new CallbackLane(inlineUnlessRefusing, "election-services[test]", this);

  @Test
  void aRefusedTaskAndThoseAfterItRunInOrderOnceTheRetryIsAccepted() {
    refusals = 1;

    assertThat(lane.submit(() -> ran.add("stop"))).isFalse();
    assertThat(lane.submit(() -> ran.add("after the stop"))).as("queued behind the refused one").isFalse();
    assertThat(ran).isEmpty();
    assertThat(lane.busy()).as("tasks wait: the lane is not idle").isTrue();
    assertThat(lane.refused()).isTrue();
    assertThat(lane.lastRefusal()).hasMessageContaining("no thread");

    assertThat(lane.retry()).isTrue();

    assertThat(ran).containsExactly("stop", "after the stop");
    assertThat(lane.busy()).isFalse();
    assertThat(lane.refused()).isFalse();
  }

  @Test
  void aRetryThatIsRefusedAgainKeepsTheTasks() {
    refusals = 2;
    lane.submit(() -> ran.add("stop"));

    assertThat(lane.retry()).isFalse();
    assertThat(ran).isEmpty();
    assertThat(lane.retry()).isTrue();
    assertThat(ran).containsExactly("stop");
  }

  @Test
  void anErrorFromThePoolIsARefusalToo() {
    CallbackLane erring = new CallbackLane(task -> {
      throw new OutOfMemoryError("simulated: unable to create native thread");
    }, "election-services[test]", this);

    assertThat(erring.submit(() -> ran.add("stop"))).isFalse();
    assertThat(erring.refused()).isTrue();
  }

  @Test
  void aRetryWithNothingRefusedIsANoOp() {
    assertThat(lane.retry()).isTrue();
    assertThat(lane.submit(() -> ran.add("a"))).isTrue();
    assertThat(ran).containsExactly("a");
  }

  /** Thrown by user code with a broken message: writing its stack trace throws too (as under OutOfMemoryError). */
  static final class UnprintableFailure extends RuntimeException {
    @Override
    public String getMessage() {
      throw new IllegalStateException("getMessage() of a user exception failed");
    }
  }

  @Test
  void aTaskWhoseFailureCannotBeLoggedLeavesTheLaneRunningTheTasksAfterIt() throws InterruptedException {
    // The lane logs what a task threw; if that line fails too, the lane must not be left marked running with its
    // queue stranded: the later tasks (a stop, the listeners' STOPPED) would never run, and awaitIdle() would wait
    // for ever (awaitStopped() never returned).
    lane.submit(() -> {
      throw new UnprintableFailure();
    });
    lane.submit(() -> ran.add("the stop after it"));

    assertThat(ran).containsExactly("the stop after it");
    assertThat(lane.busy()).isFalse();
    assertThat(lane.awaitIdle(0)).isTrue();
  }

  /** A timer that only records what it is given; the test fires each in turn, as the loop would. */
  private final List<Long> delaysMillis = new ArrayList<>();
  private final java.util.ArrayDeque<Runnable> timed = new java.util.ArrayDeque<>();
  private final CallbackLane.RetryTimer timer = (delayNanos, task) -> {
    delaysMillis.add(java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(delayNanos));
    timed.add(task);
  };

  @Test
  void aRefusedLaneIsHandedOverAgainOnTheTimerSoonerFirstThenUpToEverySecondUntilAThreadTakesIt() {
    refusals = 9;

    assertThat(lane.submitRetrying(() -> ran.add("stop"), timer)).as("this call began the retries").isFalse();
    assertThat(lane.submitRetrying(() -> ran.add("after the stop"), timer))
        .as("queued behind the refused one; the retry already scheduled covers it").isTrue();
    assertThat(timed).as("one retry at a time").hasSize(1);

    while (!timed.isEmpty()) {
      assertThat(ran).isEmpty();
      timed.poll().run();
    }

    assertThat(delaysMillis).containsExactly(10L, 20L, 40L, 80L, 160L, 320L, 640L, 1000L, 1000L);
    assertThat(ran).containsExactly("stop", "after the stop");
    assertThat(lane.busy()).isFalse();

    refusals = 1;
    assertThat(lane.submitRetrying(() -> ran.add("later"), timer)).as("a new refusal begins new retries").isFalse();
    assertThat(delaysMillis).endsWith(10L);
    timed.poll().run();
    assertThat(ran).endsWith("later");
    assertThat(timed).isEmpty();
  }

  @Test
  void aLaneThePoolTakesSchedulesNoRetry() {
    assertThat(lane.submitRetrying(() -> ran.add("a"), timer)).isTrue();
    assertThat(ran).containsExactly("a");
    assertThat(timed).isEmpty();
  }
}
