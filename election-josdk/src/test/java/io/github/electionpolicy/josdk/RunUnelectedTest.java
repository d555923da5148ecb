package io.github.electionpolicy.josdk;

import static io.github.electionpolicy.josdk.OperatorReplicas.LEASE;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.josdk.OperatorReplicas.Replica;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** When the decision is to run unelected (here: the kill switch is off), the operator starts at once. */
class RunUnelectedTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final OperatorReplicas replicas = new OperatorReplicas(api);

  @AfterEach
  void closeReplicas() {
    replicas.close();
  }

  @Test
  void theOperatorRunsWhenStartReturnsAndNoLeaseIsEverWritten() throws Exception {
    Replica alone = replicas.start("alone", options -> {
      options.environment = Map.of("LEADER_ELECTION_ENABLED", "false");
      return options;
    });

    assertThat(alone.runner().decision().contends()).isFalse();
    assertThat(alone.runner().state()).isInstanceOf(ElectionState.NotContending.class);
    assertThat(alone.service().operator()).as("the operator runs as soon as start() returned").isPresent();
    assertThat(replicas.log.running()).isEqualTo(Set.of("alone"));

    replicas.createWidget("unelected");
    Await.until("the operator reconciled the widget", () -> replicas.log.reconciled("alone", "unelected"),
        () -> replicas.log);
    assertThat(replicas.marker("unelected")).hasValueSatisfying(configMap -> assertThat(configMap.getData())
        .containsEntry("reconciledBy", "alone").containsEntry("leaseTransitions", "0"));

    alone.runner().close();
    assertThat(alone.service().operator()).isEmpty();
    assertThat(replicas.log.running()).isEmpty();
    assertThat(api.leaseWrites(LEASE)).as("Lease writes").isEmpty();
    assertThat(api.lease(LEASE)).as("the Lease").isEmpty();
  }
}
