package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Someone deletes the Lease while it is led ({@code kubectl delete lease}). */
class LeaseDeletionTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void deletedLeaseStopsTheOldLeaderBeforeAnyoneStartsAndTheFencingTokenGrows() throws Exception {
    try (Replica a = Replica.startLeader("a", api.client(), MockApi.fastSettings("a").build(), log);
        Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> a.leads()
          && b.runner.state().equals(new ElectionState.Following(Optional.of("a"))), Duration.ofSeconds(5)))
          .isTrue();
      LeadershipTerm oldTerm = a.runner.currentTerm().orElseThrow();
      assertThat(api.awaitWrites("a", 1)).as("a renews its term").isTrue();

      long deleted = System.nanoTime();
      api.client().leases().inNamespace(MockApi.NAMESPACE).withName(MockApi.LEASE).delete();
      Optional<ServiceLog.Entry> oldLeaderStopped = log.await("a", ServiceLog.Kind.STOP, deleted,
          Duration.ofSeconds(3));
      Optional<ServiceLog.Entry> nextStart = log.await(null, ServiceLog.Kind.START, deleted,
          MockApi.LEASE_DURATION.plusSeconds(3));

      assertThat(oldLeaderStopped).as("the old leader treats the deletion as a loss").isPresent();
      assertThat(nextStart).as("someone leads again").isPresent();
      assertThat(oldLeaderStopped.get().nanos()).isLessThan(nextStart.get().nanos());
      assertThat(log.overlap()).isEmpty();
      assertThat(nextStart.get().term().leaseTransitions()).isGreaterThan(oldTerm.leaseTransitions());
      assertThat(api.lease().getSpec().getLeaseTransitions()).isGreaterThan(oldTerm.leaseTransitions());
    }
  }
}
