package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An {@link Error} thrown by the user-code pool's {@code execute()} (an {@code OutOfMemoryError} "unable to create
 * native thread") leaves no callback lane busy for ever, and a close() during it still stops the runner. (From
 * the adversarial review of the runner's rewrite onto RunnerLifecycle / LifecycleDriver, commit 0201dfc.)
 */
class CallbackPoolFailureTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(2);

  /**
   * FINDING 2. An Error thrown by the user-code pool's execute() (an OutOfMemoryError "unable to create native
   * thread" from ThreadPoolExecutor.addWorker, on the shared loop) while close() stops the services. The
   * lifecycle already moved to Stopping(CLOSE) with services STOPPING, but the driver's stopServices threw before
   * it scheduled the StopDeadline timer; CallbackLane.submit handles only RejectedExecutionException, so the
   * services lane stays "running" with its task queued and no thread, for ever; and ElectionFailed during a
   * close's stop is a no-op. Result: close() never returns, awaitStopped() never returns, STOPPED is never
   * reported, the services' stop() is never called.
   */
  @Test
  void anErrorFromTheCallbackPoolDuringCloseStillStopsTheRunner() throws Exception {
    AtomicBoolean failNextExecute = new AtomicBoolean();
    Executor pool = SharedPools.userCode();
    Executor exhausted = task -> {
      if (failNextExecute.compareAndSet(true, false)) {
        throw new OutOfMemoryError("simulated: unable to create native thread");
      }
      pool.execute(task);
    };
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").stopTimeout(STOP_TIMEOUT).build())
        .service(log.service("a"))
        .userCode(exhausted)
        .start();
    assertThat(log.await("a", ServiceLog.Kind.START, 0, Duration.ofSeconds(5))).isPresent();
    assertThat(Replica.awaitTrue(() -> a.health().ready(), Duration.ofSeconds(5))).isTrue();
    failNextExecute.set(true);

    CompletableFuture<Void> closing = CompletableFuture.runAsync(a::close);

    boolean closed = Replica.awaitTrue(closing::isDone, STOP_TIMEOUT.plusSeconds(4));
    assertThat(closed).as("close() returns (state %s)", a.state()).isTrue();
    assertThat(a.state().kind()).isEqualTo(ElectionState.Kind.STOPPED);
    assertThat(a.awaitStopped(Duration.ofSeconds(1))).isTrue();
  }

  /**
   * FINDING 2, the lane alone: an Error from execute() must not leave it busy for ever (awaitStopped waits for it).
   * Since the simulation's finding of a refused stop during a close, a refused task is kept, not dropped: the
   * lane is busy until a retry hands it over, and then it and those queued after it run, in order.
   */
  @Test
  void aLaneWhoseExecutorThrowsAnErrorKeepsItsTaskUntilARetryRunsIt() throws Exception {
    AtomicBoolean fail = new AtomicBoolean(true);
    CallbackLane lane = new CallbackLane(task -> {
      if (fail.getAndSet(false)) {
        throw new OutOfMemoryError("simulated: unable to create native thread");
      }
      SharedPools.userCode().execute(task);
    }, "lane", this);
    CountDownLatch first = new CountDownLatch(1);
    assertThat(lane.submit(first::countDown)).as("refused").isFalse();
    assertThat(lane.awaitIdle(TimeUnit.MILLISECONDS.toNanos(100))).as("busy with the kept task").isFalse();

    assertThat(lane.retry()).isTrue();

    assertThat(first.await(5, TimeUnit.SECONDS)).as("the kept task runs").isTrue();
    assertThat(lane.awaitIdle(TimeUnit.SECONDS.toNanos(5))).as("idle again").isTrue();
    CountDownLatch ran = new CountDownLatch(1);
    lane.submit(ran::countDown);
    assertThat(ran.await(5, TimeUnit.SECONDS)).as("a later task runs").isTrue();
  }

}
