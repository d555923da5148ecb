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
}
