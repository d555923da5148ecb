package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.josdk.OperatorReplicas.Replica;
import io.github.electionpolicy.josdk.sample.Widget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.javaoperatorsdk.operator.api.config.ExecutorServiceManager;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.api.reconciler.dependent.ReconcileResult;
import java.lang.reflect.Field;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A reconciliation that outlives the operator's stop and only then runs its dependent-resource workflow.
 *
 * <p>JOSDK 5.3.2's {@code ExecutorServiceManager.stop} shuts the workflow executor down and then forgets it
 * ({@code workflowExecutor = null}); the next {@code context.getWorkflowExecutorService()} lazily creates a new
 * one ({@code Executors.newFixedThreadPool}, non-daemon threads) from the configuration. {@link OperatorTerm}
 * waits only for the workflow executor it took before the start, so a dependent submitted to the new one runs
 * outside everything the stop waits for: {@code stop()} returns, the runner releases the Lease and the next
 * leader starts while the old term's dependent still acts, on a pool nobody ever shuts down. For a dependent of
 * an external resource (a database, a cloud API: JOSDK's {@code AbstractExternalDependentResource}) the write
 * gate does not help: the dependent does not write through the Kubernetes client.
 *
 * <p>The reconciliation here uses JOSDK's explicit workflow invocation: a first step that outlives the stop
 * (a call deaf to interrupts that leaves the interrupt flag set, as blocking I/O does), then
 * {@code reconcileManagedWorkflow()}. With the flag set, JOSDK's workflow executor submits the dependent, stops
 * waiting for it at once ({@code OperatorException} from the interrupted wait) and the reconciliation ends.
 */
class LateWorkflowTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final OperatorReplicas replicas = new OperatorReplicas(api);

  /** Which replica each term's (gated) client belongs to, so the dependent knows whose operator it runs in. */
  static final Map<KubernetesClient, String> REPLICA_OF_CLIENT = new ConcurrentHashMap<>();
  /** The replicas whose dependent acts right now. */
  static final Set<String> ACTING = ConcurrentHashMap.newKeySet();
  /** The replica of every dependent that began to act, in order. */
  static final List<String> ACTED = new CopyOnWriteArrayList<>();
  /** The replica whose first reconciliation of "late" outlives its operator's stop. */
  static volatile String slowReplica = "";
  static volatile CountDownLatch slowDependentMayFinish = new CountDownLatch(1);
  static volatile LeadershipTerm slowTerm;
  static volatile ExecutorServiceManager slowExecutors;
  static final CountDownLatch SLOW_ENTERED = new CountDownLatch(1);
  /** What the slow reconciliation's late workflow threw. */
  static final List<RuntimeException> LATE_WORKFLOW_FAILURE = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeReplicas() {
    slowDependentMayFinish.countDown();
    replicas.close();
    REPLICA_OF_CLIENT.clear();
    ACTING.clear();
    ACTED.clear();
  }

  /** A dependent of an external resource: acts (here: until the test lets it finish) without the Kubernetes client. */
  public static final class ExternalThing implements DependentResource<String, Widget> {
    @Override
    public ReconcileResult<String> reconcile(Widget primary, Context<Widget> context) {
      String replica = REPLICA_OF_CLIENT.getOrDefault(context.getClient(), "?");
      ACTING.add(replica);
      ACTED.add(replica);
      try {
        if (replica.equals(slowReplica)) {
          awaitIgnoringInterrupts(slowDependentMayFinish);
        }
        return ReconcileResult.noOperation("external thing of " + primary.getMetadata().getName());
      } finally {
        ACTING.remove(replica);
      }
    }

    @Override
    public Class<String> resourceType() {
      return String.class;
    }
  }

  /** Reconciles widgets with a workflow invoked explicitly, after a first step. */
  @Workflow(explicitInvocation = true, dependents = @Dependent(type = ExternalThing.class))
  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  public static final class ExplicitWorkflowReconciler implements Reconciler<Widget> {
    private final String replica;

    ExplicitWorkflowReconciler(String replica) {
      this.replica = replica;
    }

    @Override
    public UpdateControl<Widget> reconcile(Widget widget, Context<Widget> context) throws Exception {
      if (replica.equals(slowReplica) && SLOW_ENTERED.getCount() > 0) {
        SLOW_ENTERED.countDown();
        outliveTheStop();
        try {
          context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow();
        } catch (RuntimeException e) {
          LATE_WORKFLOW_FAILURE.add(e);
          throw e;
        }
        return UpdateControl.noUpdate();
      }
      context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow();
      return UpdateControl.noUpdate();
    }
  }

  /**
   * Goes on until the term has ended and JOSDK's {@code Operator.stop()} has shut down and forgotten the workflow
   * executor, ignoring the interrupts the stop sends; leaves the interrupt flag set, as a blocking call that
   * ignores interrupts does.
   */
  private static void outliveTheStop() throws Exception {
    Field workflowExecutor = ExecutorServiceManager.class.getDeclaredField("workflowExecutor");
    workflowExecutor.setAccessible(true);
    BooleanSupplier outlived = () -> {
      try {
        return !slowTerm.isValid() && workflowExecutor.get(slowExecutors) == null;
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(e);
      }
    };
    boolean interrupted = false;
    // A blocking call deaf to interrupts: it waits for the two conditions it outlives (no listener for either),
    // and goes on waiting when the stop interrupts it.
    while (true) {
      try {
        if (Await.holds(outlived)) {
          break;
        }
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private static void awaitIgnoringInterrupts(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        latch.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private Replica start(String identity) {
    return replicas.start(identity, options -> {
      options.registration = (operator, term) -> {
        REPLICA_OF_CLIENT.put(operator.getKubernetesClient(), identity);
        if (identity.equals(slowReplica)) {
          slowTerm = term;
          slowExecutors = operator.getConfigurationService().getExecutorServiceManager();
        }
        operator.register(new ExplicitWorkflowReconciler(identity));
      };
      return options;
    });
  }

  @Test
  void noDependentOfTheOldOperatorActsOnceItsStopReturnedAndTheLeaseWasReleased() throws Exception {
    slowReplica = "replica-1";
    slowDependentMayFinish = new CountDownLatch(1);
    Replica leader = start("replica-1");
    Await.until("replica-1's operator runs", () -> leader.service().operator().isPresent(), () -> replicas.log);
    Replica follower = start("replica-2");
    replicas.createWidget("late");
    assertThat(SLOW_ENTERED.await(Await.GENEROUS.toSeconds(), TimeUnit.SECONDS)).as("the slow reconciliation began")
        .isTrue();

    leader.runner().close(); // stops the operator, then releases the Lease

    Await.until("replica-2's operator runs and its dependent acted",
        () -> ACTED.contains(follower.identity()), () -> ACTED + "\n" + replicas.log);
    assertThat(ACTING).as("replicas whose dependents act now, while replica-2 leads")
        .doesNotContain(leader.identity());
    assertThat(ACTED).as("replica-1's dependent, submitted only after its operator's stop, was refused")
        .doesNotContain(leader.identity());
    assertThat(LATE_WORKFLOW_FAILURE).as("the late workflow failed: the executor the stop shut down refused it")
        .singleElement().satisfies(failure -> assertThat(failure)
            .isInstanceOf(java.util.concurrent.RejectedExecutionException.class));
  }
}
