package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The leader alone is cut off from the API server, behind a TCP proxy whose connections hang. */
class PartitionTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void cutOffLeaderStopsItsReconcilersBeforeTheNewLeaderStartsItsOwn() throws Exception {
    ReplicaLink proxy = api.proxy();
    try (Replica a = Replica.start("a", api.client(proxy.url()), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
      try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log);
          Replica c = Replica.start("c", api.client(), MockApi.fastSettings("c").build(), log)) {
        assertThat(Replica.awaitTrue(() -> !b.leads() && !c.leads()
            && b.runner.state().equals(new ElectionState.Following(Optional.of("a"))), Duration.ofSeconds(5)))
            .isTrue();
        assertThat(api.awaitWrites("a", 2)).as("a renews while b and c follow").isTrue();

        long cut = System.nanoTime();
        proxy.partition();
        Optional<ServiceLog.Entry> aStopped = log.await("a", ServiceLog.Kind.STOP, cut,
            Duration.ofSeconds(4));
        Optional<ServiceLog.Entry> newLeader = log.await(null, ServiceLog.Kind.START, cut,
            Duration.ofSeconds(6));

        assertThat(aStopped).as("the cut-off leader stops its reconcilers").isPresent();
        assertThat(Duration.ofNanos(aStopped.get().nanos() - cut))
            .isLessThan(MockApi.RENEW_DEADLINE.plus(Duration.ofMillis(700)));
        assertThat(newLeader).as("another replica takes over").isPresent();
        assertThat(newLeader.get().replica()).isIn("b", "c");
        assertThat(aStopped.get().nanos()).isLessThan(newLeader.get().nanos());
        System.out.println("MEASURED partition: a stopped " + Duration.ofNanos(aStopped.get().nanos() - cut)
            .toMillis() + " ms after the cut, " + newLeader.get().replica() + " started "
            + Duration.ofNanos(newLeader.get().nanos() - cut).toMillis() + " ms after the cut");
        assertThat(log.overlap()).isEmpty();
        assertThat(a.runner.state().kind()).isEqualTo(ElectionState.Kind.FOLLOWING);
      }
    }
  }
}
