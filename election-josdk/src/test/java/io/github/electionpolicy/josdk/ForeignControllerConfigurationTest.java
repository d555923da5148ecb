package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.josdk.OperatorReplicas.Replica;
import io.github.electionpolicy.josdk.sample.WidgetReconciler;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testsupport.Await;
import io.javaoperatorsdk.operator.api.config.BaseConfigurationService;
import io.javaoperatorsdk.operator.api.config.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import io.javaoperatorsdk.operator.api.config.ConfigurationService;
import io.github.electionpolicy.josdk.sample.Widget;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A reconciler registered with a {@code ControllerConfiguration} that belongs to another JOSDK
 * {@code ConfigurationService} than the term's operator ({@code Operator.register(reconciler, configuration)} is
 * public API). JOSDK's event processor takes its reconciliation executor from the configuration's service, not
 * the operator's: that controller's reconciliations then run on an executor the term neither gates nor waits for
 * and that {@code Operator.stop()} never shuts down. Seen against the embedded API server before the check: a
 * reconciliation deaf to interrupts still ran when {@code close()} returned, after the service had logged
 * "none of its reconciliations runs any more" and the runner had released the Lease. (A configuration kept from
 * an earlier term's operator is the same case: its executor is that term's, shut down, so nothing reconciles.)
 * The start now fails, saying how to register.
 */
class ForeignControllerConfigurationTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final OperatorReplicas replicas = new OperatorReplicas(api);

  @AfterEach
  void closeReplicas() {
    replicas.close();
  }

  private ReconcilerRegistration registeringWith(ConfigurationService foreign) {
    return (operator, term) -> {
      WidgetReconciler reconciler = new WidgetReconciler(term);
      ControllerConfiguration<Widget> configuration = ControllerConfigurationOverrider
          .override(foreign.getConfigurationFor(reconciler)).settingNamespace(api.namespace()).build();
      operator.register(reconciler, configuration);
    };
  }

  @Test
  void unelectedAControllerConfiguredByAnotherConfigurationServiceFailsTheStart() {
    assertThatThrownBy(() -> replicas.start("alone", options -> {
      options.environment = Map.of("LEADER_ELECTION_ENABLED", "false");
      options.registration = registeringWith(new BaseConfigurationService());
      return options;
    })).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("another ConfigurationService")
        .hasMessageContaining("operator.getConfigurationService().getConfigurationFor(reconciler)");
  }

  @Test
  void contendingTheTermIsGivenUpAndTheLeaseReleased() throws Exception {
    Replica replica = replicas.start("replica-1", options -> {
      options.registration = registeringWith(new BaseConfigurationService());
      return options;
    });

    Await.until("EXIT after the failed start", () -> !replica.exits().isEmpty(), () -> replicas.log);
    replica.runner().awaitStopped();
    assertThat(replica.runner().state()).isInstanceOf(ElectionState.Stopped.class);
    assertThat(replica.service().operator()).isEmpty();
    assertThat(api.leaseWrites(OperatorReplicas.LEASE)).extracting(LeaseWrite::holder).as("taken, then released")
        .startsWith("replica-1").endsWith("");
  }
}
