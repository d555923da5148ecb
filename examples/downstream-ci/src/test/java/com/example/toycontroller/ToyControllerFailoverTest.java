package com.example.toycontroller;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Two replicas of the toy controller against a Lease API: one leads, and a graceful close hands over. */
class ToyControllerFailoverTest {

  private static final String LEASE = "toy-controller";

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** The replicas whose reconcilers run right now. */
  private final Set<String> running = ConcurrentHashMap.newKeySet();

  /** How the toy controller's main would start one replica, given the client the fixture hands out. */
  private ElectionRunner startReplica(String identity) {
    return ElectionRunner.builder()
        .client(api.replica(identity).client())
        .decide(ElectionPolicy.defaults(), Environment.of(Map.of()), ToyController.SUBSTRATE)
        .settings(LeaseSettings.builder()
            .leaseName(LEASE)
            .namespace(api.namespace())
            .identity(identity)
            .leaseDuration(Duration.ofSeconds(2))
            .renewDeadline(Duration.ofMillis(1500))
            .retryPeriod(Duration.ofMillis(200))
            .lossPolicy(LossPolicy.recontend())
            .build())
        .service(LeaderService.of(term -> running.add(identity), () -> running.remove(identity)))
        .start();
  }

  @Test
  void exactlyOneReplicaLeadsAndAGracefulCloseHandsOver() throws InterruptedException {
    try (ElectionRunner first = startReplica("replica-1"); ElectionRunner second = startReplica("replica-2")) {
      assertThat(await(() -> running.size() == 1)).as("one replica leads").isTrue();
      String leader = running.iterator().next();
      String follower = leader.equals("replica-1") ? "replica-2" : "replica-1";
      // Three more renewals of the leader: three retry periods in which the follower must not start its
      // reconcilers too, however slow the machine.
      long renewals = writesBy(leader);
      assertThat(await(() -> writesBy(leader) >= renewals + 3)).as("%s renews", leader).isTrue();
      assertThat(running).containsExactly(leader);

      (leader.equals("replica-1") ? first : second).close(); // releases the Lease

      assertThat(await(() -> running.equals(Set.of(follower)))).as("%s took over", follower).isTrue();
      assertThat(api.leaseWrites(LEASE)).extracting(LeaseWrite::holder)
          .containsSubsequence(leader, "", follower); // released, then taken over
    }
  }

  /** The writes of the Lease the server accepted from {@code holder}: its take-over and its renewals. */
  private long writesBy(String holder) {
    return api.leaseWrites(LEASE).stream().filter(write -> write.holder().equals(holder)).count();
  }

  private static boolean await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      // Must wait: polls, as a user's test would; the Lease writes and the running set have no listener.
      Thread.sleep(20);
    }
    return true;
  }
}
