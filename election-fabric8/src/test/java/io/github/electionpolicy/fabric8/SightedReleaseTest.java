package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A follower whose own watch never opened hears of a release through what another watch of the process saw (a
 * sharded runner's list and watch of all its Leases, {@code LifecycleDriver.sighted}), and takes the Lease at once:
 * long before its next poll (a retry period, 5 s, away), which is what makes a graceful hand-over of a shard take
 * milliseconds.
 */
class SightedReleaseTest {

  @Test
  void aSightedReleaseIsTakenAtOnceWithoutWaitingForTheNextPoll() throws Exception {
    InMemoryLeaseTransport server = new InMemoryLeaseTransport();
    server.create(new LeaseRecord("other", 10, Instant.now(), Instant.now(), 0, null), (answer, failure) -> { });
    AtomicInteger reads = new AtomicInteger();
    LeaseTransport transport = new ForwardingTransport(server) {
      @Override
      public Call read(Answered done) {
        reads.incrementAndGet();
        return super.read(done);
      }

      @Override
      public Call watch(WatchEvents events) {
        return () -> { }; // never opens: the follower has only its polls, and what it is told
      }
    };
    ElectionRunner runner = ElectionRunner.builder()
        .decision(MockApi.CONTEND)
        .settings(LeaseSettings.builder().leaseName("orders-shard-3").namespace("elections").identity("me")
            .leaseDuration(Duration.ofSeconds(12)).renewDeadline(Duration.ofSeconds(8))
            .retryPeriod(Duration.ofSeconds(5)).lossPolicy(LossPolicy.recontend()).build())
        .service(LeaderService.of(term -> { }, () -> { }))
        .rbacPreflight(false)
        .transport(transport)
        .start();
    try {
      Await.until("following other", () -> runner.state().kind() == ElectionState.Kind.FOLLOWING);
      assertThat(reads.get()).isEqualTo(1);

      server.takenBy(null, 1, Instant.now()); // released, as a graceful owner releases
      RunnerHooks.sighted(runner, server.lease(), Ticker.system().read());

      Await.until("leading", () -> runner.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(4));
      // Its next poll is 5 s after the first read: leading within 4 s, it took the Lease on the sighting, after one
      // read the sighting asked for (a watch event of a free Lease is read once more before the take).
      assertThat(reads.get()).as("the first read, and the one the sighting asked for").isEqualTo(2);
    } finally {
      runner.close();
    }
  }
}
