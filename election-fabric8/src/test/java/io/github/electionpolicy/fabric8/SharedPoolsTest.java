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
  private final BoundedCalls calls = new BoundedCalls(workers, 3);
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

  /**
   * The hand-over pool: a burst of tasks that each wait (here for the test, as a blocking interceptor would)
   * starts threads up to its bound and queues the rest, which all run once threads free up.
   */
  @Test
  void theHandOverPoolGrowsToItsBoundAndQueuesTheRestWithoutRefusingAny() throws Exception {
    ThreadPoolExecutor pool = SharedPools.elastic(3, "test-handover-");
    try {
      CountDownLatch threeRunning = new CountDownLatch(3);
      java.util.List<Integer> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
      for (int i = 0; i < 10; i++) {
        int task = i;
        pool.execute(() -> {
          ran.add(task);
          threeRunning.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
      }
      assertThat(threeRunning.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(pool.getPoolSize()).isEqualTo(3);
      assertThat(pool.getQueue()).hasSize(7);
      release.countDown();
      assertThat(io.github.electionpolicy.testsupport.Await.holds(() -> ran.size() == 10, java.time.Duration.ofSeconds(5)))
          .isTrue();
      assertThat(ran.subList(0, 3)).as("the first three started threads").containsExactlyInAnyOrder(0, 1, 2);
      assertThat(ran).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
      assertThat(pool.getLargestPoolSize()).isEqualTo(3);
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * User code: a burst of callbacks that each hold their thread (here until the test lets them go, as a slow
   * {@code stop()} would) runs on at most {@code USER_CODE_THREADS} threads of the user-code pool; the rest queue,
   * and each that waited a spill period runs on a worker of its own, so every one of them runs while the first
   * eight are still held. The test waits only for the callbacks to start.
   */
  @Test
  void userCodeRunsOnAtMostEightThreadsAndWhatWaitsAPeriodRunsElsewhere() throws Exception {
    ThreadPoolExecutor userCode = (ThreadPoolExecutor) SharedPools.userCode();
    int burst = 3 * SharedPools.USER_CODE_THREADS;
    CountDownLatch allRunning = new CountDownLatch(burst);
    java.util.Set<String> threads = java.util.concurrent.ConcurrentHashMap.newKeySet();
    for (int i = 0; i < burst; i++) {
      userCode.execute(() -> {
        threads.add(Thread.currentThread().getName());
        allRunning.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
    }
    assertThat(allRunning.await(20, TimeUnit.SECONDS)).as("every callback runs while the first ones are held")
        .isTrue();
    assertThat(userCode.getPoolSize()).isLessThanOrEqualTo(SharedPools.USER_CODE_THREADS);
    assertThat(userCode.getLargestPoolSize()).isLessThanOrEqualTo(SharedPools.USER_CODE_THREADS);
    assertThat(threads).hasSize(burst).allSatisfy(name -> assertThat(name).startsWith("election-worker-"));
  }

  /** Hand-overs one after another, each done before the next, keep one thread: one election holds one. */
  @Test
  void handOversOneAfterAnotherShareOneThread() throws Exception {
    ThreadPoolExecutor pool = SharedPools.elastic(3, "test-handover-");
    try {
      for (int i = 0; i < 20; i++) {
        CountDownLatch done = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicReference<Thread> worker = new java.util.concurrent.atomic.AtomicReference<>();
        pool.execute(() -> {
          worker.set(Thread.currentThread());
          done.countDown();
        });
        assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
        // Until the thread waits in the queue for its next task: its active count drops a moment before it gets
        // there, and a hand-over offered in between finds no thread waiting (so the pool starts another).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline && worker.get().getState() != Thread.State.WAITING
            && worker.get().getState() != Thread.State.TIMED_WAITING) {
          Thread.onSpinWait();
        }
      }
      assertThat(pool.getLargestPoolSize()).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aShutDownHandOverPoolRefuses() {
    ThreadPoolExecutor pool = SharedPools.elastic(1, "test-handover-");
    pool.shutdown();
    assertThatThrownBy(() -> pool.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
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
