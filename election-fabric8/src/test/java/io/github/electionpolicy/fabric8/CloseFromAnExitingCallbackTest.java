package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import io.github.electionpolicy.testsupport.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A callback of the runner that calls {@code System.exit} blocks until the shutdown hooks are done, and the usual hook
 * is {@code runner::close}: a close that waited for the runner's lanes once {@code STOPPED} is reported would wait the
 * whole stop timeout for the callback that waits for it, and the process would exit that much later. Review h-close:
 * these were red with a {@code close()} that waited for the listeners (de704d5, reverted), which spared only a runner
 * that had stopped on its own before the close began; {@code close()} returns once {@code STOPPED} is reported.
 *
 * <p>{@code System.exit} is played by {@link #exitThroughTheHook}: the hook's close on a thread of its own, joined
 * by the callback, as {@code System.exit} waits for the shutdown hooks.
 */
class CloseFromAnExitingCallbackTest {

  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  /** What a callback that calls System.exit does: runs the shutdown hook and waits for it; completes how long it took. */
  private static void exitThroughTheHook(ElectionRunner runner, CompletableFuture<Duration> hookTook) {
    Thread hook = new Thread(() -> {
      long begun = System.nanoTime();
      runner.close();
      hookTook.complete(Duration.ofNanos(System.nanoTime() - begun));
    }, "shutdown-hook");
    hook.start();
    try {
      hook.join(TimeUnit.SECONDS.toMillis(60));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * A custom {@link LossHandler} that exits the process (it runs on the services' lane, after the services stopped):
   * the shutdown hook's close stops the runner at once ("while a loss is handled, the runner stops once the services
   * stopped"), and returns then; a close that also waited for the services' lane would wait there, where the handler
   * waits for the hook in System.exit, for the whole stop timeout.
   */
  @Test
  void theShutdownHooksCloseDoesNotWaitForALossHandlerThatExits() throws Exception {
    AtomicReference<ElectionRunner> runner = new AtomicReference<>();
    CompletableFuture<Duration> hookTook = new CompletableFuture<>();
    LossHandler exits = lostTerm -> {
      exitThroughTheHook(runner.get(), hookTook); // System.exit(1), as a handler that gives up would
      return LossHandler.AfterLoss.STOP;
    };
    runner.set(ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").stopTimeout(STOP_TIMEOUT).lossPolicy(LossPolicy.custom(exits)).build())
        .service(log.service("a"))
        .start());
    try {
      assertThat(leads(runner.get())).isTrue();

      api.takeLeaseAs("intruder");

      Duration took = hookTook.get(30, TimeUnit.SECONDS);
      assertThat(runner.get().state().kind()).isEqualTo(ElectionState.Kind.STOPPED);
      assertThat(took).as("the shutdown hook's close() while the loss handler is in System.exit")
          .isLessThan(STOP_TIMEOUT.dividedBy(2));
    } finally {
      runner.get().close();
    }
  }

  /**
   * A listener that exits the process when this replica loses leadership (to restart with clean caches), while the
   * runner itself recontends: the runner is running when the shutdown hook closes it, so the close waits the whole
   * stop timeout for the listener, which waits for the hook in System.exit, if it waited for the listeners at all.
   */
  @Test
  void theShutdownHooksCloseDoesNotWaitForAListenerThatExitsOnALoss() throws Exception {
    AtomicReference<ElectionRunner> runner = new AtomicReference<>();
    CompletableFuture<Duration> hookTook = new CompletableFuture<>();
    ElectionListener exitsOnALoss = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (previous.kind() == ElectionState.Kind.LEADING && current.kind() != ElectionState.Kind.STOPPED) {
          exitThroughTheHook(runner.get(), hookTook); // System.exit(3)
        }
      }
    };
    runner.set(ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").stopTimeout(STOP_TIMEOUT).build())
        .service(log.service("a"))
        .listener(exitsOnALoss)
        .start());
    try {
      assertThat(leads(runner.get())).isTrue();

      api.takeLeaseAs("intruder");

      Duration took = hookTook.get(30, TimeUnit.SECONDS);
      assertThat(runner.get().state().kind()).isEqualTo(ElectionState.Kind.STOPPED);
      assertThat(took).as("the shutdown hook's close() while a listener is in System.exit")
          .isLessThan(STOP_TIMEOUT.dividedBy(2));
    } finally {
      runner.get().close();
    }
  }

  /**
   * A listener that exits the process when its runner stopped on its own ({@code STOPPED && !isClosed()}, as
   * {@code isClosed()}'s Javadoc advises): the hook's close must return at once then. The reverted close of de704d5
   * meant to, but told a runner that stopped from {@code hasStopped()}, whose latch the loop counts down only after it handed
   * {@code STOPPED} to the listeners (and completed the start, published the view, handed its last line over). A hook
   * that reads it in between, the loop thread being descheduled for a moment, takes the runner for a running one and
   * waits the whole stop timeout for the listener that waits for it. The executor below holds the loop right after
   * it handed {@code STOPPED} to the listeners' lane, until the hook's close is past that read: a forced
   * interleaving of a real, if narrow, window. (The view shows {@code STOPPED} before the listeners hear it.)
   */
  @Test
  void aListenerThatExitsOnItsRunnersOwnStopIsNotWaitedForWhenTheHookRunsBeforeTheLoopCountsDown() throws Exception {
    api.denying(Set.of("update"));
    AtomicReference<ElectionRunner> runner = new AtomicReference<>();
    AtomicReference<Thread> hookThread = new AtomicReference<>();
    CompletableFuture<Duration> hookTook = new CompletableFuture<>();
    AtomicBoolean held = new AtomicBoolean();
    Executor pool = SharedPools.userCode();
    Executor holdsTheLoopAfterStopped = task -> {
      pool.execute(task);
      ElectionRunner current = runner.get();
      if (current != null && current.state().kind() == ElectionState.Kind.STOPPED && held.compareAndSet(false, true)) {
        // On the loop, inside reportStopped, after publish(STOPPED) handed the listeners their call: the loop
        // thread is descheduled here until the hook's close() waits for STOPPED.
        try {
          Await.holds(() -> parkedInClose(hookThread.get()), Duration.ofSeconds(5));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    };
    ElectionListener exitsOnItsOwnStop = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED && !runner.get().isClosed()) {
          exitThroughTheHookRecording(runner.get(), hookTook, hookThread);
        }
      }
    };
    runner.set(ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").stopTimeout(STOP_TIMEOUT).build())
        .service(log.service("a"))
        .listener(exitsOnItsOwnStop)
        .userCode(holdsTheLoopAfterStopped)
        .start());
    try {
      Duration took = hookTook.get(30, TimeUnit.SECONDS);
      assertThat(held).as("the loop was held after it handed STOPPED over").isTrue();
      assertThat(runner.get().state()).isInstanceOf(ElectionState.Stopped.class);
      assertThat(((ElectionState.Stopped) runner.get().state()).cause())
          .as("stopped on its own").isEqualTo(ElectionState.StopCause.ACCESS_DENIED);
      assertThat(took).as("the shutdown hook's close() while the listener is in System.exit")
          .isLessThan(STOP_TIMEOUT.dividedBy(2));
    } finally {
      runner.get().close();
    }
  }

  private static void exitThroughTheHookRecording(ElectionRunner runner, CompletableFuture<Duration> hookTook,
      AtomicReference<Thread> hookThread) {
    Thread hook = new Thread(() -> {
      long begun = System.nanoTime();
      runner.close();
      hookTook.complete(Duration.ofNanos(System.nanoTime() - begun));
    }, "shutdown-hook");
    hookThread.set(hook);
    hook.start();
    try {
      hook.join(TimeUnit.SECONDS.toMillis(60));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Whether {@code thread} is the hook, parked in close() waiting for STOPPED. */
  private static boolean parkedInClose(Thread thread) {
    if (thread == null || !"shutdown-hook".equals(thread.getName())) {
      return false;
    }
    Thread.State state = thread.getState();
    return (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING)
        && Arrays.stream(thread.getStackTrace())
            .anyMatch(frame -> frame.getMethodName().equals("awaitClosedUninterruptibly"));
  }

  private static boolean leads(ElectionRunner runner) throws InterruptedException {
    return Await.holds(() -> runner.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(10));
  }
}
