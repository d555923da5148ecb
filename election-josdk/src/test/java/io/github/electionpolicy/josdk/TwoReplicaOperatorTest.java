package io.github.electionpolicy.josdk;

import static io.github.electionpolicy.josdk.OperatorReplicas.LEASE;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.josdk.OperatorLog.Run;
import io.github.electionpolicy.josdk.OperatorReplicas.Replica;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testsupport.Await;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two replicas of the sample operator (a JOSDK {@code Operator} with one reconciler of {@code Widget}s) against the
 * embedded API server: the real JOSDK, the real runner, real HTTP. Exactly one replica's operator runs and
 * reconciles; a graceful close hands over; after a crash the other replica takes over only once the Lease expired,
 * and only after the old leader's operator had stopped.
 */
class TwoReplicaOperatorTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private OperatorReplicas replicas;

  private OperatorReplicas replicas() {
    if (replicas == null) {
      replicas = new OperatorReplicas(api);
    }
    return replicas;
  }

  @AfterEach
  void closeReplicas() {
    if (replicas != null) {
      replicas.close();
    }
  }

  /** Starts two replicas and waits until one operator runs; returns {leader, follower}. */
  private Replica[] twoReplicasOneLeading() throws InterruptedException {
    OperatorReplicas r = replicas();
    Replica first = r.start("replica-1");
    Replica second = r.start("replica-2");
    Await.until("one replica's operator runs", () -> r.log.running().size() == 1, () -> r.log);
    String leading = r.log.running().iterator().next();
    return leading.equals(first.identity()) ? new Replica[] {first, second} : new Replica[] {second, first};
  }

  @Test
  void exactlyOneReplicaReconcilesAndTheOtherNeverDoesWhileTheFirstLeads() throws InterruptedException {
    OperatorReplicas r = replicas();
    Replica[] pair = twoReplicasOneLeading();
    Replica leader = pair[0];
    Replica follower = pair[1];

    for (String widget : List.of("alpha", "beta", "gamma")) {
      r.createWidget(widget);
    }
    Await.until("the leader reconciled the three widgets",
        () -> List.of("alpha", "beta", "gamma").stream().allMatch(w -> r.log.reconciled(leader.identity(), w)),
        () -> r.log);
    // Four of the leader's renewals: the follower had as many retry periods to (wrongly) start an operator.
    long renewed = writesBy(r, leader.identity());
    Await.until("four more renewals by the leader", () -> writesBy(r, leader.identity()) >= renewed + 4, () -> r.log);

    assertThat(r.log.reconciliations(leader.identity())).extracting(OperatorLog.Event::widget)
        .contains("alpha", "beta", "gamma");
    assertThat(r.log.reconciliations(follower.identity())).as("the follower's reconciliations").isEmpty();
    assertThat(r.log.runs()).extracting(Run::replica).containsExactly(leader.identity());
    assertThat(follower.service().operator()).as("the follower's operator").isEmpty();
    assertThat(leader.service().operator()).as("the leader's operator").isPresent();
    assertThat(r.marker("alpha")).hasValueSatisfying(configMap ->
        assertThat(configMap.getData()).containsEntry("reconciledBy", leader.identity()));
  }

  @Test
  void aGracefulCloseStopsTheOperatorReleasesTheLeaseAndTheOtherReplicaReconcilesNewWidgets()
      throws Exception {
    OperatorReplicas r = replicas();
    Replica[] pair = twoReplicasOneLeading();
    Replica leader = pair[0];
    Replica follower = pair[1];
    r.createWidget("before");
    Await.until("the leader reconciled \"before\"", () -> r.log.reconciled(leader.identity(), "before"),
        () -> r.log);

    leader.runner().close();

    Run old = r.log.lastRun(leader.identity()).orElseThrow();
    assertThat(old.stoppedNanos()).as("the leader's operator stopped within close()").isNotEqualTo(Long.MAX_VALUE);
    assertThat(leader.service().operator()).isEmpty();
    Await.until("the follower's operator runs", () -> r.log.running().equals(Set.of(follower.identity())),
        () -> r.log);
    r.createWidget("after");
    Await.until("the follower reconciled \"after\"", () -> r.log.reconciled(follower.identity(), "after"),
        () -> r.log);

    assertThat(api.leaseWrites(LEASE)).extracting(LeaseWrite::holder)
        .as("released, then taken over").containsSubsequence(leader.identity(), "", follower.identity());
    assertThat(r.log.reconciliations(leader.identity())).extracting(OperatorLog.Event::widget)
        .doesNotContain("after");
    assertThat(r.log.reconciliations(leader.identity())).allSatisfy(e ->
        assertThat(e.nanos()).isLessThan(old.stoppedNanos()));
    assertNoOverlap(r.log.runs());
    assertThat(leader.exits()).as("closing is not a loss: no exit").isEmpty();
    assertThat(r.marker("after")).hasValueSatisfying(configMap ->
        assertThat(configMap.getData()).containsEntry("reconciledBy", follower.identity()));
  }

  @Test
  void afterACrashTheOtherReplicaTakesOverOnlyOnceTheLeaseExpiredAndAfterTheOldOperatorStopped()
      throws Exception {
    OperatorReplicas r = replicas();
    Replica[] pair = twoReplicasOneLeading();
    Replica leader = pair[0];
    Replica follower = pair[1];
    r.createWidget("before");
    Await.until("the leader reconciled \"before\"", () -> r.log.reconciled(leader.identity(), "before"),
        () -> r.log);

    leader.link().partition(); // its renewals hang from now on, as do its operator's requests

    Await.until("the follower's operator runs", () -> r.log.running().equals(Set.of(follower.identity())),
        () -> r.log);
    r.createWidget("after");
    Await.until("the follower reconciled \"after\"", () -> r.log.reconciled(follower.identity(), "after"),
        () -> r.log);
    Await.until("the old leader exited (EXIT)", () -> !leader.exits().isEmpty(), () -> r.log);

    List<LeaseWrite> writes = api.leaseWrites(LEASE);
    LeaseWrite lastRenewal = writes.stream().filter(w -> w.holder().equals(leader.identity()))
        .reduce((a, b) -> b).orElseThrow();
    LeaseWrite takeOver = writes.stream().filter(w -> w.holder().equals(follower.identity()))
        .findFirst().orElseThrow();
    assertThat(takeOver.receivedNanos() - lastRenewal.receivedNanos())
        .as("the take-over came only once the lease duration had passed since the last renewal the server got")
        .isGreaterThanOrEqualTo(OperatorReplicas.LEASE_DURATION.toNanos());
    assertThat(writes).extracting(LeaseWrite::holder).as("no release: the old leader could not reach the server")
        .doesNotContain("");

    Run old = r.log.lastRun(leader.identity()).orElseThrow();
    Run next = r.log.lastRun(follower.identity()).orElseThrow();
    assertThat(old.stoppedNanos()).as("the old leader's operator had stopped before the new one started")
        .isLessThan(next.startingNanos());
    assertNoOverlap(r.log.runs());
    assertThat(leader.exits()).as("EXIT after the loss, with status 1").containsExactly(1);
    assertThat(next.leaseTransitions()).as("the new term's fencing token").isGreaterThan(old.leaseTransitions());
  }

  static void assertNoOverlap(List<Run> runs) {
    for (Run a : runs) {
      List<Run> overlapping = runs.stream().filter(b -> b != a && !b.replica().equals(a.replica()) && a.overlaps(b))
          .collect(Collectors.toList());
      assertThat(overlapping).as("operators that ran at the same time as %s", a).isEmpty();
    }
  }

  /** How many Lease writes the server accepted that left {@code holder} in the Lease. */
  private static long writesBy(OperatorReplicas r, String holder) {
    return r.api.leaseWrites(OperatorReplicas.LEASE).stream().filter(w -> w.holder().equals(holder)).count();
  }
}
