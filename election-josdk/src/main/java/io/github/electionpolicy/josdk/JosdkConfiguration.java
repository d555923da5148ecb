package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.javaoperatorsdk.operator.api.config.ConfigurationService;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The user's JOSDK configuration, and the one rule this module imposes on it: JOSDK's own leader election stays
 * off. Stateless; thread-safe.
 */
final class JosdkConfiguration {

  /** The setting the check names in its message: the overrider method that turns JOSDK's election on. */
  static final String LEADER_ELECTION_SETTING = "ConfigurationServiceOverrider.withLeaderElectionConfiguration";

  private JosdkConfiguration() {}

  /**
   * The user's overrides, then the client this module chooses, which wins over any client set in them. The
   * operator does not close it on stop: {@code Operator.stop()} returns while interrupted reconciliations may
   * still run, and they should meet the write gate's refusal, not a closed client; {@link OperatorTerm} closes it
   * once they ended.
   *
   * @param user the user's overrides
   * @param client the client the operator must use
   * @return the overrides to build an {@code Operator} or a {@link ConfigurationService} with
   */
  static Consumer<ConfigurationServiceOverrider> withClient(Consumer<ConfigurationServiceOverrider> user,
      KubernetesClient client) {
    return overrider -> {
      user.accept(overrider);
      overrider.withKubernetesClient(client).withCloseClientOnStop(false);
    };
  }

  /**
   * Builds the configuration the overrides describe, without building an {@code Operator} (no thread, no
   * request), to check it at start-up.
   *
   * @throws InvalidElectionSettingException if it turns on JOSDK's own leader election
   */
  static void check(Consumer<ConfigurationServiceOverrider> user, KubernetesClient client) {
    requireNoOwnLeaderElection(ConfigurationService.newOverriddenConfigurationService(withClient(user, client)));
  }

  /**
   * Fails when JOSDK's own leader election is configured: it would run a second election, on a second Lease,
   * inside an operator this module starts only while it leads, and exit the process on its own loss.
   *
   * @throws InvalidElectionSettingException naming the setting, the Lease it configures and the fix
   */
  static void requireNoOwnLeaderElection(ConfigurationService configuration) {
    Optional<LeaderElectionConfiguration> own = configuration.getLeaderElectionConfiguration();
    if (own.isEmpty()) {
      return;
    }
    LeaderElectionConfiguration election = own.get();
    String lease = election.getLeaseNamespace().map(ns -> ns + "/").orElse("") + election.getLeaseName();
    throw new InvalidElectionSettingException(LEADER_ELECTION_SETTING, "Lease " + lease,
        "none: election-policy's ElectionRunner elects this operator and starts it only while it leads, so JOSDK's "
            + "own leader election must stay off (two elections on two Leases would each believe they decide, and "
            + "JOSDK's would exit the process on its own loss)",
        "remove withLeaderElectionConfiguration(...) from the configuration given to OperatorService.builder()"
            + ".configuration(...), and give its Lease name to LeaseSettings.builder().leaseName(\""
            + election.getLeaseName() + "\") instead");
  }
}
