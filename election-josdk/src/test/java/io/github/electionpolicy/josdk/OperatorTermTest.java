package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.josdk.sample.Widget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.OperatorException;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.health.InformerHealthIndicator;
import io.javaoperatorsdk.operator.health.InformerWrappingEventSourceHealthIndicator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What JOSDK 5.3's {@code Operator} does by itself, and what {@link OperatorTerm} adds: a restarted
 * {@code Operator} keeps the client it was built with (hence one {@code Operator} per term, each on its term's
 * write gate), and a failed {@code start()} leaves its informers running (hence the term's stop stops them). Real
 * JOSDK against the embedded API server.
 */
class OperatorTermTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private static List<InformerHealthIndicator> informers(Operator operator) {
    List<InformerHealthIndicator> informers = new ArrayList<>();
    for (RegisteredController<?> controller : registered(operator)) {
      for (InformerWrappingEventSourceHealthIndicator<?> source
          : controller.getControllerHealthInfo().informerEventSourceHealthIndicators().values()) {
        informers.addAll(source.informerHealthIndicators().values());
      }
    }
    return informers;
  }

  @SuppressWarnings("unchecked")
  private static Set<RegisteredController<?>> registered(Operator operator) {
    return (Set<RegisteredController<?>>) (Set<?>) operator.getRegisteredControllers();
  }

  @Test
  void aStoppedOperatorStartsAgainButKeepsItsClientSoATermsWriteGateCouldNotBeReplaced() throws Exception {
    // JOSDK 5.3.2 recreates its executors and informers on a second start(), when it did not close its client.
    // What a restart cannot do is take another client: the client is fixed when the Operator is built, so an
    // Operator restarted for a new term would still write through the ended term's gate, which refuses every write.
    // Hence one Operator per term.
    Operator operator = new Operator(config -> config.withKubernetesClient(api.client()).withCloseClientOnStop(false));
    CountingReconciler reconciler = new CountingReconciler();
    operator.register(reconciler);
    var client = operator.getKubernetesClient();
    operator.start();
    operator.stop();

    operator.start();
    api.client().resources(Widget.class).inNamespace(api.namespace())
        .resource(Widget.named(api.namespace(), "again", "red")).create();
    Await.until("the restarted operator reconciled", () -> reconciler.reconciliations.get() > 0, () -> reconciler);
    assertThat(operator.getKubernetesClient()).as("the client after the restart").isSameAs(client);
    operator.stop();
  }

  @Test
  void afterAFailedStartJosdkLeavesTheInformerRunningAndTheTermsStopEndsIt() throws Exception {
    api.client().resources(Widget.class).inNamespace(api.namespace())
        .resource(Widget.named(api.namespace(), "existing", "red")).create();
    KubernetesClient termClient = api.replica("term").client();
    // No list answers within a nanosecond: Operator.start() fails waiting for the cache to sync.
    OperatorTerm term =
        new OperatorTerm(config -> config.withCacheSyncTimeout(Duration.ofNanos(1)), termClient, () -> true);
    CountingReconciler reconciler = new CountingReconciler();
    term.operator().register(reconciler);

    assertThatThrownBy(term::start).isInstanceOf(OperatorException.class);
    Await.until("JOSDK's failed start left the widget informer running and synced",
        () -> informers(term.operator()).stream().anyMatch(i -> i.isRunning() && i.hasSynced()),
        () -> informers(term.operator()));
    List<InformerHealthIndicator> informers = informers(term.operator());

    term.stop();

    Await.until("every informer of the failed operator stopped, its client still open",
        () -> informers.stream().noneMatch(InformerHealthIndicator::isRunning), () -> informers);
    termClient.close(); // what OperatorService does once the term's stop returned
    assertThat(reconciler.reconciliations).as("nothing was reconciled: the executors were shut down").hasValue(0);
  }

  @Test
  void anOperatorThatNeverStartedStopsWithoutAFailure() {
    // A registration that throws after registering a reconciler: the operator never started.
    OperatorTerm term = new OperatorTerm(config -> { }, api.client(), () -> true);
    term.operator().register(new CountingReconciler());

    term.stop(); // throws nothing: nothing of the operator ran
  }

  @Test
  void aStartedOperatorsStopEndsItsInformers() throws Exception {
    OperatorTerm term = new OperatorTerm(config -> { }, api.client(), () -> true);
    CountingReconciler reconciler = new CountingReconciler();
    term.operator().register(reconciler);
    term.start();
    api.client().resources(Widget.class).inNamespace(api.namespace())
        .resource(Widget.named(api.namespace(), "one", "red")).create();
    Await.until("the widget was reconciled", () -> reconciler.reconciliations.get() > 0, () -> reconciler);

    List<InformerHealthIndicator> informers = informers(term.operator());
    assertThat(informers).isNotEmpty().allSatisfy(informer -> assertThat(informer.isRunning()).isTrue());
    term.stop();

    assertThat(informers).allSatisfy(informer -> assertThat(informer.isRunning()).isFalse());
  }
}
