package io.github.electionpolicy.josdk;

import static io.github.electionpolicy.josdk.OperatorReplicas.LEASE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.josdk.OperatorReplicas.Replica;
import io.github.electionpolicy.josdk.sample.WidgetReconciler;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testsupport.Await;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A term whose operator cannot start: whatever the registration or JOSDK throws, what was started is stopped
 * before {@code start} rethrows, so the runner gives the term up and applies the loss policy with nothing left
 * running.
 */
class FailedStartTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final OperatorReplicas replicas = new OperatorReplicas(api);

  @AfterEach
  void closeReplicas() {
    replicas.close();
  }

  /** replica-1 took the Lease (and may have renewed it while starting), then released it. */
  private void assertTakenThenReleased() {
    assertThat(api.leaseWrites(LEASE)).extracting(LeaseWrite::holder).as("taken, then released")
        .startsWith("replica-1").endsWith("").filteredOn(holder -> !holder.isEmpty()).containsOnly("replica-1");
  }

  @Test
  void aRegistrationThatThrowsGivesUpTheTermReleasesTheLeaseAndExits() throws Exception {
    Replica replica = replicas.start("replica-1", options -> {
      options.registration = (operator, term) -> {
        throw new IllegalStateException("no reconciler for you");
      };
      return options;
    });

    Await.until("EXIT after the failed start", () -> !replica.exits().isEmpty(), () -> replicas.log);
    replica.runner().awaitStopped();
    assertThat(replica.exits()).containsExactly(1);
    assertThat(replica.runner().state()).isInstanceOf(ElectionState.Stopped.class);
    assertThat(replica.service().operator()).isEmpty();
    assertTakenThenReleased();
  }

  @Test
  void anErrorFromTheRegistrationCountsTheSame() throws Exception {
    Replica replica = replicas.start("replica-1", options -> {
      options.registration = (operator, term) -> {
        throw new AssertionError("a bug in the registration");
      };
      return options;
    });

    Await.until("EXIT after the failed start", () -> !replica.exits().isEmpty(), () -> replicas.log);
    replica.runner().awaitStopped();
    assertThat(replica.exits()).containsExactly(1);
    assertTakenThenReleased();
  }

  @Test
  void unelectedAFailedStartThrowsFromTheRunnersStart() {
    assertThatThrownBy(() -> replicas.start("alone", options -> {
      options.environment = Map.of("LEADER_ELECTION_ENABLED", "false");
      options.registration = (operator, term) -> { };
      return options;
    })).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("registered no reconciler")
        .hasMessageContaining("operator.register(...)");
  }

  @Test
  void anOperatorWhoseStartFailsIsStoppedBeforeTheTermIsGivenUp() throws Exception {
    // JOSDK's Operator.start() fails when an informer's cache does not sync in time (stopOnInformerErrorDuringStartup
    // is on by default); no list answers within a nanosecond.
    Replica replica = replicas.start("replica-1", options -> {
      options.configuration = config -> config.withCacheSyncTimeout(Duration.ofNanos(1));
      return options;
    });

    Await.until("EXIT after the failed start", () -> !replica.exits().isEmpty(), () -> replicas.log);
    replica.runner().awaitStopped();
    assertThat(replica.exits()).containsExactly(1);
    assertThat(replica.service().operator()).isEmpty();
    // Released: the start failed only once what it started had stopped.
    assertTakenThenReleased();

    replicas.createWidget("orphan");
    // Must wait: nothing of the failed operator may reconcile it, and with no replica left running nothing marks
    // the time that passes (no renewals, no reconciliation).
    Thread.sleep(4 * OperatorReplicas.RETRY_PERIOD.toMillis());
    assertThat(replicas.log.reconciliations("replica-1")).isEmpty();
  }

  @Test
  void aConfigurationThatTurnsOnJosdksElectionOnlyLaterFailsTheStart() throws Exception {
    // Checked at build() and again for each term's operator: configuration is user code.
    AtomicInteger calls = new AtomicInteger();
    OperatorService service = OperatorService.builder()
        .client(api.client())
        .configuration(config -> {
          if (calls.incrementAndGet() > 1) {
            config.withLeaderElectionConfiguration(LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration("josdk-lease").build());
          }
        })
        .reconcilers((operator, term) -> operator.register(new WidgetReconciler(term)))
        .build();

    assertThatThrownBy(() -> io.github.electionpolicy.fabric8.ElectionRunner.builder()
        .decide(io.github.electionpolicy.ElectionPolicy.defaults(),
            io.github.electionpolicy.Environment.of(Map.of("LEADER_ELECTION_ENABLED", "off")),
            OperatorReplicas.SUBSTRATE)
        .service(service)
        .start())
        .as("the runner reports a failed unelected start with the service's failure as the cause")
        .cause().isInstanceOf(InvalidElectionSettingException.class)
        .hasMessageContaining("josdk-lease");
    assertThat(service.operator()).isEmpty();
  }
}
