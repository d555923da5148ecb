package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The shared workers: Lease calls are bounded apart from user code, named while they run, and a call's cancel
 * interrupts that call only; tasks that run one after another reuse one worker.
 */
class SharedPoolsTest {

  private final ThreadPoolExecutor workers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS,
      new SynchronousQueue<>(), task -> {
        Thread t = new Thread(task, "election-worker-7");
        t.setDaemon(true);
        return t;
      });
  private final SharedPools.BoundedCalls calls = new SharedPools.BoundedCalls(workers, 3);
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void stop() {
    release.countDown();
    workers.shutdownNow();
  }

  private Runnable hanging(CountDownLatch started) {
    return () -> {
      started.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    };
  }

  @Test
  void aCallPastTheBoundIsRefusedAtOnceWhileUserCodeStillRuns() throws Exception {
    CountDownLatch started = new CountDownLatch(3);
    for (int i = 0; i < 3; i++) {
      calls.execute(hanging(started));
    }
    assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();

    assertThatThrownBy(() -> calls.execute(() -> { })).isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("3 Lease calls are in flight");
    assertThat(calls.inFlight()).as("a refused call holds no slot").isEqualTo(3);
    CountDownLatch userCode = new CountDownLatch(1);
    workers.execute(userCode::countDown);
    assertThat(userCode.await(5, TimeUnit.SECONDS)).as("user code is not bounded by the calls").isTrue();
  }

  @Test
  void aFinishedCallFreesItsSlot() throws Exception {
    CountDownLatch started = new CountDownLatch(3);
    for (int i = 0; i < 3; i++) {
      calls.execute(hanging(started));
    }
    assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
    release.countDown();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (calls.inFlight() > 0 && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(calls.inFlight()).isZero();
    Future<?> next = calls.submit(() -> { });
    next.get(5, TimeUnit.SECONDS);
  }

  @Test
  void aCallRunsOnAWorkerNamedForIoAndTheWorkerGetsItsNameBack() throws Exception {
    AtomicReference<String> during = new AtomicReference<>();
    calls.submit(() -> during.set(Thread.currentThread().getName())).get(5, TimeUnit.SECONDS);
    AtomicReference<String> after = new AtomicReference<>();
    workers.submit(() -> after.set(Thread.currentThread().getName())).get(5, TimeUnit.SECONDS);

    assertThat(during.get()).isEqualTo("election-io-7");
    assertThat(after.get()).isEqualTo("election-worker-7");
  }

  @Test
  void cancellingACallInterruptsThatCallAndNotTheWorkersNextTask() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    Future<?> call = calls.submit(() -> {
      started.countDown();
      try {
        new CountDownLatch(1).await();
      } catch (InterruptedException e) {
        interrupted.countDown();
      }
    });
    assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
    call.cancel(true);
    assertThat(interrupted.await(5, TimeUnit.SECONDS)).isTrue();

    AtomicReference<Boolean> nextInterrupted = new AtomicReference<>();
    workers.submit(() -> nextInterrupted.set(Thread.currentThread().isInterrupted())).get(5, TimeUnit.SECONDS);
    assertThat(nextInterrupted.get()).isFalse();
  }

  @Test
  void tasksThatRunOneAfterAnotherShareOneWorker() throws Exception {
    for (int i = 0; i < 20; i++) {
      calls.submit(() -> { }).get(5, TimeUnit.SECONDS);
      awaitWorkersIdle();
      workers.submit(() -> { }).get(5, TimeUnit.SECONDS);
      awaitWorkersIdle();
    }
    assertThat(workers.getLargestPoolSize()).isEqualTo(1);
  }

  /** Until every worker waits for its next task (a finished task's future completes a moment before that). */
  private void awaitWorkersIdle() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (System.nanoTime() < deadline && Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("election-worker-7") || t.getName().equals("election-io-7"))
        .anyMatch(t -> t.getState() != Thread.State.TIMED_WAITING)) {
      Thread.onSpinWait();
    }
  }

  @Test
  void theSharedPoolIsNeverShutDown() {
    ExecutorService io = SharedPools.io();
    assertThatThrownBy(io::shutdown).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(io::shutdownNow).isInstanceOf(UnsupportedOperationException.class);
    assertThat(io.isShutdown()).isFalse();
  }

  /**
   * FINDING 6 (h-attack2). The shared threads (the workers, the loop) are started by whichever thread first hands
   * them work, and a new Thread inherits that thread's context class loader and inheritable thread-locals: the
   * first runner's caller of start() (a request thread, a web application's loader), or the loop. Shared by every
   * runner, they then ran every other runner's callbacks with that one caller's context, and kept it (a class
   * loader, a request-scoped value) alive for as long as the JVM. A shared thread carries the library's class
   * loader and inherits nothing.
   */
  @Test
  void aSharedThreadInheritsNothingFromTheThreadThatStartedIt() throws Exception {
    InheritableThreadLocal<String> requestScoped = new InheritableThreadLocal<>();
    ClassLoader callersLoader = new java.net.URLClassLoader(new java.net.URL[0], null);
    AtomicReference<String> seenValue = new AtomicReference<>("unset");
    AtomicReference<ClassLoader> seenLoader = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      requestScoped.set("tenant-a");
      Thread shared = SharedPools.threadFactory("election-worker-").newThread(() -> {
        seenValue.set(requestScoped.get());
        seenLoader.set(Thread.currentThread().getContextClassLoader());
      });
      shared.start();
      try {
        shared.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    caller.setContextClassLoader(callersLoader);
    caller.start();
    caller.join();

    assertThat(seenValue.get()).as("an inheritable thread-local of the caller").isNull();
    assertThat(seenLoader.get()).isSameAs(SharedPools.class.getClassLoader());
  }
}
