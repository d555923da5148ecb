package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.testsupport.Await;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Finding 1 (h-attack6): {@code SharedPools.Serial} loses a task it accepted when the start of its drain is
 * refused while another thread hands it a task.
 *
 * <p><b>The bug.</b> {@code Serial.execute} sets {@code draining} under its lock, leaves the lock, and then asks
 * the workers for a thread. If the workers refuse ("unable to create native thread", which the user-code pool
 * throws below its bound), its catch clears the whole queue, on the belief written there that "not draining, so
 * nothing else was queued since". But {@code draining} was true all along: a second thread's {@code execute} in
 * that window saw it, queued its task and returned normally, as an accepted task. The clear drops it. Its caller
 * (another runner's {@link CallbackLane}, the log lane) believes its drain was handed over, so it never marks
 * itself refused and never retries: that runner's lines are lost and its lane stays {@code busy()} for ever, so
 * each {@code awaitWritten} (the exiter's, {@code close()}'s, {@code awaitStopped()}'s) waits its whole bound,
 * and every later line of that runner queues behind the lost drain and is never written either.
 *
 * <p><b>The scenario.</b> Hand-driven: the workers' {@code execute} holds the first caller until a second
 * caller's {@code execute} returned (or, with the fix, waits for the writer's lock), then refuses. No sleeps:
 * latches and thread states only.
 *
 * <p><b>Suggested fix.</b> Ask the workers for the drain while holding the lock (no task can then join the queue
 * between the refusal and the clear; a drain on another thread waits for the lock as it would for a task), or,
 * on a refusal, remove only the refused task and, if others joined meanwhile, keep them and hand the drain over
 * again (or refuse them too in a way their callers see).
 */
class LogWriterRefusalRaceTest {

  @Test
  void aTaskAcceptedWhileTheDrainIsRefusedIsNeverLost() throws Exception {
    CountDownLatch firstAsking = new CountDownLatch(1);
    CompletableFuture<Boolean> secondSubmitted = new CompletableFuture<>();
    Thread[] secondThread = new Thread[1];
    List<Runnable> started = new CopyOnWriteArrayList<>();
    Executor workers = new Executor() {
      private boolean first = true;

      @Override
      public void execute(Runnable drain) {
        boolean refuse;
        synchronized (this) {
          refuse = first;
          first = false;
        }
        if (refuse) {
          firstAsking.countDown();
          // Refused once the second caller either handed its task over (accepted) or waits to (a fix that holds
          // the writer's lock while it asks for the drain): deterministic either way.
          Await.until("the second caller handed over or waits to", () -> secondSubmitted.isDone()
              || (secondThread[0] != null && secondThread[0].getState() == Thread.State.BLOCKED));
          throw new OutOfMemoryError("simulated: unable to create native thread");
        }
        started.add(drain);
      }
    };
    SharedPools.Serial serial = new SharedPools.Serial(workers);
    List<String> ran = new CopyOnWriteArrayList<>();

    CompletableFuture<Throwable> firstCaller = CompletableFuture.supplyAsync(() -> {
      try {
        serial.execute(() -> ran.add("first"));
        return null;
      } catch (Throwable e) {
        return e;
      }
    });
    assertThat(firstAsking.await(20, TimeUnit.SECONDS)).isTrue();

    // Another runner's lane hands its drain over while the first is being refused.
    CallbackLane other = new CallbackLane(serial, "election-log[lease:b]", this);
    Thread second = new Thread(() -> secondSubmitted.complete(other.submit(() -> ran.add("second"))),
        "second-runner");
    secondThread[0] = second;
    second.start();

    assertThat(firstCaller.get(20, TimeUnit.SECONDS)).as("the first caller hears its refusal")
        .isInstanceOf(RejectedExecutionException.class);
    boolean accepted = secondSubmitted.get(20, TimeUnit.SECONDS);
    assertThat(other.refused()).as("the second lane is refused exactly when it was told so").isEqualTo(!accepted);

    // Whatever the workers were handed since is run; the accepted task must be among what runs.
    for (Runnable drain : started) {
      drain.run();
    }
    serial.execute(() -> ran.add("third"));
    for (Runnable drain : started) {
      drain.run();
    }
    assertThat(accepted).as("the second lane's drain was handed over").isTrue();
    assertThat(ran).as("the task accepted while the drain was refused still runs").contains("second", "third");
    assertThat(other.busy()).as("the second lane is not left busy for ever").isFalse();
  }

  /** What the first caller's refusal alone looks like, for contrast: its task is refused and not kept. */
  @Test
  void aRefusedTaskAloneIsNotKept() {
    SharedPools.Serial serial = new SharedPools.Serial(task -> {
      throw new RejectedExecutionException("simulated");
    });
    assertThatThrownBy(() -> serial.execute(() -> {})).isInstanceOf(RejectedExecutionException.class);
  }
}
