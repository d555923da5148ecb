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
}
