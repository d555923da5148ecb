package io.github.electionpolicy.josdk;

import static io.github.electionpolicy.josdk.OperatorReplicas.LEASE;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.josdk.OperatorLog.Run;
import io.github.electionpolicy.josdk.OperatorReplicas.Replica;
import io.github.electionpolicy.josdk.sample.WidgetReconciler;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testsupport.Await;
import io.javaoperatorsdk.operator.Operator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Under {@link LossPolicy#recontend()} a replica that lost the Lease contends again, and a new term runs a new
 * {@code Operator}, started only after the old one stopped; the replicas' operators never run at once.
 */
class RecontendTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final OperatorReplicas replicas = new OperatorReplicas(api);
  private final List<Operator> firstReplicasOperators = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeReplicas() {
    replicas.close();
  }

  @Test
  void aReplicaThatLostLeadsAgainWithANewOperator() throws Exception {
    WidgetReconciler.Observer seen = replicas.log.reconciliations();
    Replica first = replicas.start("replica-1", options -> {
      options.lossPolicy = LossPolicy.recontend();
      options.registration = (operator, term) -> {
        firstReplicasOperators.add(operator);
        operator.register(new WidgetReconciler(term, seen));
      };
      return options;
    });
    Await.until("replica-1's operator started", () -> first.service().operator().isPresent(), () -> replicas.log);
    Replica second = replicas.start("replica-2");

    first.link().partition();
    Await.until("replica-2's operator runs", () -> replicas.log.running().equals(Set.of("replica-2")),
        () -> replicas.log);
    first.link().heal();
    Await.until("replica-1 follows again", () -> first.runner().state().kind() == ElectionState.Kind.FOLLOWING,
        () -> first.runner().state());

    second.runner().close();
    Await.until("replica-1's operator runs again", () -> replicas.log.running().equals(Set.of("replica-1")),
        () -> replicas.log);
    replicas.createWidget("second-term");
    Await.until("replica-1 reconciled in its second term", () -> replicas.log.reconciled("replica-1", "second-term"),
        () -> replicas.log);

    assertThat(firstReplicasOperators).as("one Operator per term").hasSize(2);
    assertThat(firstReplicasOperators.get(1)).isNotSameAs(firstReplicasOperators.get(0));
    assertThat(first.service().operator()).containsSame(firstReplicasOperators.get(1));
    assertThat(first.exits()).as("RECONTEND does not exit").isEmpty();
    List<Run> runs = replicas.log.runs();
    assertThat(runs).extracting(Run::replica).containsExactly("replica-1", "replica-2", "replica-1");
    TwoReplicaOperatorTest.assertNoOverlap(runs);
    assertThat(replicas.log.reconciliationsOutOfTerm()).isEmpty();
    assertThat(runs.stream().map(Run::leaseTransitions).collect(Collectors.toList()))
        .as("fencing tokens of the three terms").isSorted().doesNotHaveDuplicates();
    assertThat(replicas.log.reconciliations("replica-1").stream()
        .filter(e -> e.widget().equals("second-term")).map(OperatorLog.Event::leaseTransitions))
        .containsOnly(runs.get(2).leaseTransitions());
    assertThat(api.leaseWrites(LEASE)).extracting(LeaseWrite::holder)
        .containsSubsequence("replica-1", "replica-2", "", "replica-1");
  }

  @Test
  void anOperatorThatFinishesStartingAfterItsTermEndedBeginsNoReconciliation() throws Exception {
    replicas.createWidget("early");
    CountDownLatch registering = new CountDownLatch(1);
    CountDownLatch healed = new CountDownLatch(1);
    WidgetReconciler.Observer seen = replicas.log.reconciliations();
    Replica first = replicas.start("replica-1", options -> {
      options.lossPolicy = LossPolicy.recontend();
      options.registration = (operator, term) -> {
        operator.register(new WidgetReconciler(term, seen));
        if (registering.getCount() > 0) {
          // The first term's start is slow: it goes on until the term has ended (the replica was cut off meanwhile)
          // and the replica can reach the server again, so that the operator then starts for real.
          registering.countDown();
          term.awaitEnd();
          healed.await();
        }
      };
      return options;
    });
    assertThat(registering.await(Await.GENEROUS.toSeconds(), TimeUnit.SECONDS)).isTrue();
    first.link().partition();
    Await.until("replica-1 lost the Lease", () -> first.runner().state().kind() != ElectionState.Kind.LEADING,
        () -> first.runner().state());
    Replica second = replicas.start("replica-2");
    Await.until("replica-2 reconciled \"early\"", () -> replicas.log.reconciled("replica-2", "early"),
        () -> replicas.log);

    // The old term's operator now starts for real (its caches sync) and JOSDK submits "early" for reconciliation.
    first.link().heal();
    healed.countDown();
    Await.until("replica-1's operator of the ended term was stopped",
        () -> replicas.log.lastRun("replica-1").orElseThrow().stoppedNanos() != Long.MAX_VALUE, () -> replicas.log);

    assertThat(replicas.log.reconciliations("replica-1")).as("reconciliations of the ended term").isEmpty();
    assertThat(replicas.log.reconciliationsOutOfTerm()).isEmpty();
    assertThat(second.service().operator()).isPresent();
  }
}
