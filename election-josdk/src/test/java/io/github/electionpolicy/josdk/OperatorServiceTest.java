package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.testing.NullPointerTester;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.javaoperatorsdk.operator.api.config.ConfigurationService;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.InformerStoppedHandler;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The builder's checks, and what the service sets on top of the user's JOSDK configuration for each term's
 * operator. Real JOSDK configuration classes; the embedded API server counts requests.
 */
class OperatorServiceTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private static final ReconcilerRegistration NOTHING = (operator, term) -> { };

  @Test
  void everySetterAndStartRejectNull() {
    NullPointerTester tester = new NullPointerTester()
        .setDefault(KubernetesClient.class, api.client())
        .setDefault(ReconcilerRegistration.class, NOTHING);
    tester.testAllPublicInstanceMethods(OperatorService.builder());
    tester.testAllPublicInstanceMethods(OperatorService.builder().client(api.client()).reconcilers(NOTHING).build());
  }

  @Test
  void buildWithoutAClientSaysWhatToCall() {
    assertThatThrownBy(() -> OperatorService.builder().reconcilers(NOTHING).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no client: call client(kubernetesClient)");
  }

  @Test
  void buildWithoutReconcilersSaysWhatToCall() {
    assertThatThrownBy(() -> OperatorService.builder().client(api.client()).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no reconcilers: call reconcilers((operator, term) -> operator.register(");
  }

  @Test
  void buildFailsLoudlyWhenJosdksOwnLeaderElectionIsConfigured() {
    assertThatThrownBy(() -> OperatorService.builder()
        .client(api.client())
        .configuration(config -> config.withLeaderElectionConfiguration(
            LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration("widget-operator-lease")
                .withLeaseNamespace("shop").build()))
        .reconcilers(NOTHING)
        .build())
        .isInstanceOfSatisfying(InvalidElectionSettingException.class, e -> {
          assertThat(e.setting()).isEqualTo("ConfigurationServiceOverrider.withLeaderElectionConfiguration");
          assertThat(e.value()).isEqualTo("Lease shop/widget-operator-lease");
        })
        .hasMessageStartingWith(
            "ConfigurationServiceOverrider.withLeaderElectionConfiguration=\"Lease shop/widget-operator-lease\" is "
                + "not valid: accepted values are none: election-policy's ElectionRunner elects this operator")
        .hasMessageContaining("fix: remove withLeaderElectionConfiguration(...) from the configuration given to "
            + "OperatorService.builder().configuration(...), and give its Lease name to "
            + "LeaseSettings.builder().leaseName(\"widget-operator-lease\") instead");
  }

  /** The common pool ignores shutdown(): a term's stop, which waits until its executors terminated, would hang. */
  @Test
  void buildRefusesTheCommonPoolAsAnExecutorThatNeverTerminates() {
    assertThatThrownBy(() -> OperatorService.builder().client(api.client()).reconcilers(NOTHING)
        .configuration(config -> config.withExecutorService(java.util.concurrent.ForkJoinPool.commonPool()))
        .build())
        .isInstanceOfSatisfying(InvalidElectionSettingException.class, e -> {
          assertThat(e.setting()).isEqualTo("ConfigurationServiceOverrider.withExecutorService");
          assertThat(e.value()).isEqualTo("ForkJoinPool.commonPool()");
        })
        .hasMessageContaining("fix: give the operator a pool of its own");
    assertThatThrownBy(() -> OperatorService.builder().client(api.client()).reconcilers(NOTHING)
        .configuration(config -> config.withWorkflowExecutorService(java.util.concurrent.ForkJoinPool.commonPool()))
        .build())
        .isInstanceOfSatisfying(InvalidElectionSettingException.class,
            e -> assertThat(e.setting()).isEqualTo("ConfigurationServiceOverrider.withWorkflowExecutorService"));
  }

  @Test
  void buildSendsNoRequest() {
    ReplicaLink replica = api.replica("builder");
    OperatorService service = OperatorService.builder()
        .client(replica.client())
        .configuration(config -> config.withConcurrentReconciliationThreads(3))
        .reconcilers(NOTHING)
        .build();

    assertThat(replica.requestCount()).isZero();
    assertThat(service.operator()).isEmpty();
    assertThat(service).hasToString("OperatorService{no operator running}");
  }

  @Test
  void eachTermsConfigurationKeepsTheUsersSettingsButUsesTheTermsClientAndItsOwnExecutorAndHandler() {
    List<Throwable> seenByUsersHandler = new CopyOnWriteArrayList<>();
    InformerStoppedHandler usersHandler = (informer, ex) -> seenByUsersHandler.add(ex);
    KubernetesClient usersClient = api.replica("users").client();
    KubernetesClient termsClient = api.replica("terms").client();
    AtomicBoolean valid = new AtomicBoolean(true);
    AtomicBoolean stopping = new AtomicBoolean();
    Consumer<ConfigurationServiceOverrider> user = config -> config
        .withConcurrentReconciliationThreads(3)
        .withKubernetesClient(usersClient)
        .withCloseClientOnStop(true)
        .withInformerStoppedHandler(usersHandler);

    ConfigurationService term = ConfigurationService.newOverriddenConfigurationService(
        JosdkConfiguration.forTerm(user, termsClient, valid::get, stopping::get));

    assertThat(term.concurrentReconciliationThreads()).isEqualTo(3);
    assertThat(term.getKubernetesClient()).as("the term's (write-gated) client").isSameAs(termsClient);
    assertThat(term.closeClientOnStop()).as("closed by the service once the reconciliations ended").isFalse();
    assertThat(term.getExecutorService()).isInstanceOf(TermGatedExecutor.class);
    InformerStoppedHandler handler = term.getInformerStoppedHandler().orElseThrow();
    RuntimeException whileRunning = new RuntimeException("while running");
    handler.onStop(null, whileRunning);
    stopping.set(true);
    handler.onStop(null, new RuntimeException("while stopping"));
    assertThat(seenByUsersHandler).as("the user's handler, called while running only").containsExactly(whileRunning);
    term.getExecutorService().shutdownNow();
  }

  @Test
  void anExecutorSharedAcrossTermsIsRefusedOnceAnEarlierTermShutItDown() {
    ExecutorService shared = Executors.newFixedThreadPool(1);
    shared.shutdown();

    assertThatThrownBy(() -> JosdkConfiguration.forTerm(config -> config.withExecutorService(shared),
        api.client(), () -> true, () -> false))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("the reconciliation executor of the configuration is shut down")
        .hasMessageContaining("config -> config.withExecutorService(Executors.newFixedThreadPool(n))");
  }
}
