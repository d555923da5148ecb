package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Review h-rev2 of the owner's close (LifecycleDriver.requestClose(true), commit 0b76b0e): the same race as
 * CloseRaceTest's finding 7, for the close a sharded replica's coordinator sends its shard runners (closeShard).
 * Made deterministic by holding the shared loop while the answer of the take, then the close, are queued.
 */
class OwnerCloseRaceTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  /** The user's close: taken in first (LifecycleDriver.takeCloseFirst), the take that landed starts nothing. */
  @Test
  void theUsersCloseQueuedBehindATakeStartsNoWork() throws Exception {
    assertThat(startsAfterACloseQueuedBehindTheTake(false)).as("starts of the closed runner's services").isZero();
  }

  /**
   * FINDING (h-rev2 B): the owner's close queued behind the answer of a take was taken in after it: the lifecycle was
   * still Contending when the Elected arrived, so it led, published LEADING and started the services, for a runner
   * its owner had closed before (for a shard, a coordinator that had handed the shard over: "from the hand-over on
   * the shard is not this replica's to start work for"). closeShard's plain close (before 0b76b0e) was taken in
   * first, by takeCloseFirst, and started nothing. The Lease still kept other replicas out (the work stops before a
   * release), so no overlap; the work ran for a shard the replica gave up, e.g. on its membership's loss. Now
   * takeCloseFirst takes in a pending owner's close too, except ahead of a loss (it yields to that loss's policy).
   * Red before (1 start), green after.
   */
  @Test
  void theOwnersCloseQueuedBehindATakeStartsNoWork() throws Exception {
    assertThat(startsAfterACloseQueuedBehindTheTake(true)).as("starts of the owner-closed runner's services").isZero();
  }

  private long startsAfterACloseQueuedBehindTheTake(boolean owner) throws Exception {
    AtomicBoolean holdCreates = new AtomicBoolean(true);
    AtomicReference<Runnable> deliver = new AtomicReference<>();
    CountDownLatch createHeld = new CountDownLatch(1);
    LeaseSettings settings = MockApi.fastSettings("a").build();
    LeaseTransport holding = new ForwardingTransport(new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
        settings, SharedPools.io())) {
      @Override
      public Call create(LeaseRecord record, Answered done) {
        if (!holdCreates.compareAndSet(true, false)) {
          return super.create(record, done);
        }
        return super.create(record, (answer, failure) -> {
          deliver.set(() -> done.answered(answer, failure));
          createHeld.countDown();
        });
      }
    };
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .transport(holding)
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(log.service("a"))
        .start();
    CountDownLatch loopHeld = new CountDownLatch(1);
    CountDownLatch releaseLoop = new CountDownLatch(1);
    try {
      assertThat(createHeld.await(10, TimeUnit.SECONDS)).as("the take's answer held").isTrue();
      RunnerLoop.shared().execute(() -> {
        loopHeld.countDown();
        try {
          releaseLoop.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      assertThat(loopHeld.await(5, TimeUnit.SECONDS)).isTrue();
      deliver.get().run(); // the take's answer: queued on the held loop
      LifecycleDriver driver = a.driverForTest();
      if (owner) {
        driver.requestClose(true); // a coordinator's closeShard, before the replica's own close
      } else {
        driver.requestClose();
      }
      releaseLoop.countDown();
      assertThat(Replica.awaitTrue(driver::hasStopped, Duration.ofSeconds(10))).as("stopped").isTrue();
      return log.of("a", ServiceLog.Kind.START).size();
    } finally {
      releaseLoop.countDown();
      a.close();
    }
  }
}
