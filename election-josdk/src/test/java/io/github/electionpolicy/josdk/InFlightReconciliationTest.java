package io.github.electionpolicy.josdk;

import static io.github.electionpolicy.josdk.OperatorReplicas.LEASE;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.TermEndedException;
import io.github.electionpolicy.josdk.OperatorLog.Event;
import io.github.electionpolicy.josdk.OperatorLog.Kind;
import io.github.electionpolicy.josdk.OperatorLog.Run;
import io.github.electionpolicy.josdk.OperatorReplicas.Replica;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A reconciliation still running when leadership ends: JOSDK's {@code Operator.stop()} interrupts it and returns
 * without waiting for it, so {@link OperatorService#stop()} waits for it; only then may the runner release the
 * Lease and the next leader start. Its write after the term ended is refused by the write gate and never reaches
 * the server.
 */
class InFlightReconciliationTest {

  /** How long the slow reconciliation goes on after its term ended, ignoring the interrupts JOSDK sends it. */
  private static final Duration GOES_ON_FOR = Duration.ofMillis(300);

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final OperatorReplicas replicas = new OperatorReplicas(api);
  private final CountDownLatch slowEntered = new CountDownLatch(1);

  @AfterEach
  void closeReplicas() {
    replicas.close();
  }

  /**
   * The first reconciliation of widget "slow" goes on until its term ended and then some more, deaf to interrupts,
   * then writes; later ones (the next leader's) do not wait.
   */
  private void holdUpSlowWidget(io.github.electionpolicy.fabric8.LeadershipTerm term,
      io.github.electionpolicy.josdk.sample.Widget widget) {
    if (!widget.getMetadata().getName().equals("slow") || slowEntered.getCount() == 0) {
      return;
    }
    slowEntered.countDown();
    while (term.isValid()) {
      Thread.onSpinWait();
      sleepIgnoringInterrupts(10);
    }
    sleepIgnoringInterrupts(GOES_ON_FOR.toMillis());
  }

  private static void sleepIgnoringInterrupts(long millis) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (System.nanoTime() - end < 0) {
      try {
        // Must wait: this is the reconciliation's own work, deaf to interrupts; it must go on for this long
        // whatever JOSDK does, and it is what the test holds the close behind.
        Thread.sleep(Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())));
      } catch (InterruptedException ignored) {
        // a reconciler deaf to interrupts: the flag is dropped on purpose
      }
    }
  }

  private Replica start(String identity) {
    return replicas.start(identity, options -> {
      options.observer = log -> log.reconciliations(this::holdUpSlowWidget);
      // A stop timeout well above GOES_ON_FOR, so the release does not depend on the machine's load.
      options.settings = settings -> settings.leaseDuration(Duration.ofSeconds(6));
      return options;
    });
  }

  @Test
  void closeReturnsAndTheLeaseIsReleasedOnlyAfterAnInFlightReconciliationEnded() throws Exception {
    Replica first = start("replica-1");
    Replica second = start("replica-2");
    Await.until("one operator runs", () -> replicas.log.running().size() == 1, () -> replicas.log);
    Replica leader = replicas.log.running().contains(first.identity()) ? first : second;
    Replica follower = leader == first ? second : first;
    replicas.createWidget("slow");
    assertThat(slowEntered.await(Await.GENEROUS.toSeconds(), TimeUnit.SECONDS)).as("the slow reconciliation began")
        .isTrue();

    leader.runner().close();
    long closed = System.nanoTime();

    Event slowEnded = replicas.log.events().stream()
        .filter(e -> e.kind() == Kind.RECONCILED && e.widget().equals("slow")).findFirst()
        .orElseThrow(() -> new AssertionError("close() returned before the reconciliation ended\n" + replicas.log));
    Run old = replicas.log.lastRun(leader.identity()).orElseThrow();
    assertThat(slowEnded.nanos()).as("the reconciliation ended before the operator's stop returned")
        .isLessThan(old.stoppedNanos()).isLessThan(closed);
    assertThat(slowEnded.failure()).as("its write after the term ended was refused by the write gate")
        .isInstanceOf(TermEndedException.class);
    LeaseWrite release = api.leaseWrites(LEASE).stream().filter(w -> w.holder().isEmpty()).findFirst()
        .orElseThrow(() -> new AssertionError("no release: " + api.leaseWrites(LEASE)));
    assertThat(release.receivedNanos()).as("the Lease was released only after the reconciliation ended")
        .isGreaterThan(slowEnded.nanos());

    Await.until("the follower's operator runs", () -> replicas.log.running().equals(Set.of(follower.identity())),
        () -> replicas.log);
    assertThat(replicas.log.lastRun(follower.identity()).orElseThrow().startingNanos())
        .as("the next leader started after the reconciliation ended").isGreaterThan(slowEnded.nanos());
    Await.until("the follower reconciled \"slow\" again", () -> replicas.log.reconciled(follower.identity(), "slow"),
        () -> replicas.log);
    assertThat(replicas.marker("slow")).hasValueSatisfying(configMap -> assertThat(configMap.getData())
        .as("the only write of the ConfigMap is the new leader's").containsEntry("reconciledBy", follower.identity()));
  }
}
