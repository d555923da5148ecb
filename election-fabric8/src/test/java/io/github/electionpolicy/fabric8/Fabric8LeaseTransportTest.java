package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The real transport's bookkeeping of its calls: a call cancelled while it waits in the I/O queue is not held in
 * flight. (From the adversarial review of the runner's rewrite onto RunnerLifecycle, commit 0201dfc.)
 */
class Fabric8LeaseTransportTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  /**
   * FINDING 3. Fabric8LeaseTransport.inFlight leaks the Call of every request cancelled while it waited in the I/O
   * queue (the elector's request timeout, with the shared pool of 8 busy: many runners, or a slow API server):
   * Future.cancel() keeps the task from ever running, and only the task's own finally removes the Call. Each
   * leaked Call holds its answer callback (the elector, the loop), for as long as the runner lives.
   */
  @Test
  void aRequestCancelledWhileQueuedLeavesNothingInFlight() throws Exception {
    java.util.concurrent.ExecutorService io = java.util.concurrent.Executors.newSingleThreadExecutor();
    CountDownLatch busy = new CountDownLatch(1);
    try (Fabric8LeaseTransport transport = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
        MockApi.fastSettings("a").build(), io)) {
      io.execute(() -> {
        try {
          busy.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      for (int i = 0; i < 100; i++) {
        LeaseTransport.Call call = transport.read((answer, failure) -> { });
        call.cancel(); // as LeaseElector.timedOut does
      }
      busy.countDown();
      io.submit(() -> { }).get(5, TimeUnit.SECONDS); // the queue drained

      java.lang.reflect.Field field = Fabric8LeaseTransport.class.getDeclaredField("inFlight");
      field.setAccessible(true);
      assertThat((java.util.Set<?>) field.get(transport)).as("calls still held in flight").isEmpty();
    } finally {
      io.shutdownNow();
    }
  }

  /**
   * FINDING 3 (h-attack2). A pool that cannot start a thread throws an {@link Error} ("unable to create native
   * thread"), which BoundedCalls passed on; the transport caught only RejectedExecutionException, so the Error came
   * out of {@code read()} (and {@code watch()}) on the runner's loop and failed the election (ELECTION_FAILED, an
   * exit under {@code EXIT}) where a refused call is a failed call that the elector retries. The preflight's
   * reviews and the Event writes go through the same bound. A call the pool cannot start is refused like one past
   * the bound.
   */
  @Test
  void aCallThePoolCannotStartAThreadForFailsAsARefusedCall() {
    java.util.concurrent.ExecutorService noThread = new java.util.concurrent.AbstractExecutorService() {
      @Override
      public void execute(Runnable command) {
        throw new OutOfMemoryError("simulated: unable to create native thread");
      }

      @Override
      public void shutdown() {}

      @Override
      public java.util.List<Runnable> shutdownNow() {
        return java.util.List.of();
      }

      @Override
      public boolean isShutdown() {
        return false;
      }

      @Override
      public boolean isTerminated() {
        return false;
      }

      @Override
      public boolean awaitTermination(long timeout, TimeUnit unit) {
        return false;
      }
    };
    SharedPools.BoundedCalls io = new SharedPools.BoundedCalls(noThread, SharedPools.IO_MAX_CALLS);
    java.util.List<LeaseStep.Answer> answers = new java.util.ArrayList<>();
    boolean[] watchClosed = {false};
    try (Fabric8LeaseTransport transport = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
        MockApi.fastSettings("a").build(), io)) {
      // Caught here so that the simulated OutOfMemoryError fails the test instead of ending the test JVM.
      org.assertj.core.api.Assertions.assertThatCode(() -> {
        transport.read((answer, failure) -> answers.add(answer));
        transport.watch(new LeaseTransport.WatchEvents() {
          @Override
          public void opened() {}

          @Override
          public void changed(LeaseRecord record) {}

          @Override
          public void closed() {
            watchClosed[0] = true;
          }
        });
      }).doesNotThrowAnyException();
    }
    assertThat(answers).singleElement().isInstanceOf(LeaseStep.Answer.Failed.class);
    assertThat(watchClosed[0]).as("the watch is reported closed, so the elector polls").isTrue();
    assertThat(io.inFlight()).isZero();
  }
}
