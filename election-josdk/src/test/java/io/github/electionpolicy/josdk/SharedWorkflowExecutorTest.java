package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.josdk.sample.Widget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.api.reconciler.dependent.ReconcileResult;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A workflow executor created outside the configuration callback is shared by every term's operator; the first
 * term's stop shuts it down (as it does the reconciliation executor, which the service already refuses with a
 * message). Unchecked, the next term (under {@code RECONTEND}) started and every dependent of every reconciliation
 * failed with a {@code RejectedExecutionException} for the whole term. Real JOSDK, embedded API server.
 */
class SharedWorkflowExecutorTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  static final AtomicInteger DEPENDENT_RECONCILIATIONS = new AtomicInteger();
  private final ExecutorService shared = Executors.newFixedThreadPool(2);

  @AfterEach
  void shutDown() {
    shared.shutdownNow();
    DEPENDENT_RECONCILIATIONS.set(0);
  }

  /** A dependent that only counts. */
  public static final class Counted implements DependentResource<String, Widget> {
    @Override
    public ReconcileResult<String> reconcile(Widget primary, Context<Widget> context) {
      DEPENDENT_RECONCILIATIONS.incrementAndGet();
      return ReconcileResult.noOperation("counted");
    }

    @Override
    public Class<String> resourceType() {
      return String.class;
    }
  }

  /** Reconciles widgets through a managed workflow of one dependent. */
  @Workflow(dependents = @Dependent(type = Counted.class))
  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  public static final class WorkflowReconciler implements Reconciler<Widget> {
    @Override
    public UpdateControl<Widget> reconcile(Widget widget, Context<Widget> context) {
      return UpdateControl.noUpdate();
    }
  }

  @Test
  void aWorkflowExecutorSharedAcrossTermsIsRefusedOnceAnEarlierTermShutItDown() throws Exception {
    Consumer<ConfigurationServiceOverrider> configuration = config -> config.withWorkflowExecutorService(shared);
    api.client().resources(Widget.class).inNamespace(api.namespace())
        .resource(Widget.named(api.namespace(), "one", "red")).create();

    OperatorTerm first = new OperatorTerm(configuration, api.client(), () -> true);
    first.operator().register(new WorkflowReconciler());
    first.start();
    Await.until("the first term's dependent reconciled", () -> DEPENDENT_RECONCILIATIONS.get() > 0,
        () -> DEPENDENT_RECONCILIATIONS);
    first.stop();
    assertThat(shared.isShutdown()).as("the first term's stop shut the shared workflow executor down").isTrue();

    assertThatThrownBy(() -> new OperatorTerm(configuration, api.client(), () -> true))
        .as("the next term's operator, whose every dependent would be refused")
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("the workflow executor of the configuration is shut down")
        .hasMessageContaining("config -> config.withWorkflowExecutorService(Executors.newFixedThreadPool(n))");
  }
}
