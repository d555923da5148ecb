package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.fabric8.TestTerms;
import io.github.electionpolicy.josdk.sample.Gadget;
import io.javaoperatorsdk.operator.OperatorException;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ContextInitializer;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the sharded operator makes of what user code throws where JOSDK 5.3 catches exceptions only: in {@code
 * reconcile} and {@code cleanup} (ShardGate's {@code timeControllerExecution}) and in {@code updateErrorStatus}
 * (GuardedReconciler), every {@link Error}, a {@link VirtualMachineError} included, and any other {@link Throwable}
 * that is not an {@link Exception}, becomes an {@link IllegalStateException} that carries it; an exception passes as
 * it is. And the wrapper keeps what JOSDK reads of the user's reconciler.
 */
class UserErrorsTest {

  /** A Throwable neither an Exception nor an Error, as a sneaky throw can make one reach JOSDK. */
  static final class Odd extends Throwable {
    private static final long serialVersionUID = 1L;

    Odd() {
      super("neither an Exception nor an Error");
    }
  }

  static Stream<Throwable> notExceptions() {
    return Stream.of(new AssertionError("a bug"), new NoClassDefFoundError("Missing"),
        new StackOverflowError("a recursion"), new OutOfMemoryError("a big list"), new InternalError("the JVM"),
        new Odd());
  }

  static Stream<Exception> exceptions() {
    return Stream.of(new IllegalArgumentException("a bug"), new java.io.IOException("a failed call"));
  }

  private static Gadget gadget() {
    Gadget gadget = Gadget.named("ns", "g-0");
    gadget.getMetadata().setUid("uid-0");
    return gadget;
  }

  /** Runs {@code execution} through an owned reconciliation of g-0, as JOSDK's dispatcher does. */
  private static Object reconcileThroughTheGate(String name, ThrowingSupplier execution) throws Exception {
    ShardOwnership ownership = new ShardOwnership(Shards.of(1), null, (client, term) -> client);
    ShardGate gate = new ShardGate(Metrics.NOOP, ownership);
    ownership.own(0, TestTerms.valid("pod-a"));
    Gadget gadget = gadget();
    gate.reconciliationStarted(gadget, Map.of());
    try {
      return gate.timeControllerExecution(new Metrics.ControllerExecution<Object>() {
        @Override
        public String name() {
          return name;
        }

        @Override
        public String controllerName() {
          return "gadgets";
        }

        @Override
        public String successTypeName(Object result) {
          return "success";
        }

        @Override
        public ResourceID resourceID() {
          return ResourceID.fromResource(gadget);
        }

        @Override
        public Map<String, Object> metadata() {
          return Map.of();
        }

        @Override
        public Object execute() throws Exception {
          return execution.get();
        }
      });
    } finally {
      gate.reconciliationFinished(gadget, null, Map.of());
    }
  }

  /** What user code does: may throw anything. */
  interface ThrowingSupplier {
    Object get() throws Exception;
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneakyThrow(Throwable t) throws T {
    throw (T) t;
  }

  @ParameterizedTest
  @MethodSource("notExceptions")
  void anErrorOfReconcileOrCleanupFailsTheReconciliation(Throwable thrown) {
    for (String name : List.of("reconcile", "cleanup")) {
      assertThatThrownBy(() -> reconcileThroughTheGate(name, () -> {
        sneakyThrow(thrown);
        return null;
      })).as("what JOSDK gets when %s throws %s", name, thrown)
          .isInstanceOf(IllegalStateException.class)
          .hasCause(thrown)
          .hasMessageContaining("the reconciler's " + name + " of " + ResourceID.fromResource(gadget()));
    }
  }

  @ParameterizedTest
  @MethodSource("exceptions")
  void anExceptionOfReconcilePassesAsItIs(Exception thrown) {
    assertThatThrownBy(() -> reconcileThroughTheGate("reconcile", () -> {
      throw thrown;
    })).isSameAs(thrown);
  }

  @Test
  void aReconciliationThatReturnsReturnsWhatTheReconcilerReturned() throws Exception {
    UpdateControl<Gadget> answer = UpdateControl.noUpdate();
    assertThat(reconcileThroughTheGate("reconcile", () -> answer)).isSameAs(answer);
  }

  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static class Plain implements Reconciler<Gadget> {
    final AtomicReference<Throwable> errorStatusThrows = new AtomicReference<>();
    final ErrorStatusUpdateControl<Gadget> errorStatus = ErrorStatusUpdateControl.noStatusUpdate();
    final UpdateControl<Gadget> update = UpdateControl.noUpdate();
    final List<EventSource<?, Gadget>> sources = List.of();

    @Override
    public UpdateControl<Gadget> reconcile(Gadget resource, Context<Gadget> context) {
      return update;
    }

    @Override
    public List<EventSource<?, Gadget>> prepareEventSources(EventSourceContext<Gadget> context) {
      return sources;
    }

    @Override
    public ErrorStatusUpdateControl<Gadget> updateErrorStatus(Gadget resource, Context<Gadget> context, Exception e) {
      Throwable thrown = errorStatusThrows.get();
      if (thrown != null) {
        UserErrorsTest.<RuntimeException>sneakyThrow(thrown);
      }
      return errorStatus;
    }

    @Override
    public String toString() {
      return "Plain";
    }
  }

  static final class Cleaning extends Plain implements Cleaner<Gadget> {
    final DeleteControl delete = DeleteControl.noFinalizerRemoval();

    @Override
    public DeleteControl cleanup(Gadget resource, Context<Gadget> context) {
      return delete;
    }
  }

  static final class Initializing extends Plain implements ContextInitializer<Gadget> {
    Gadget initialized;

    @Override
    public void initContext(Gadget primary, Context<Gadget> context) {
      initialized = primary;
    }
  }

  static final class Both extends Plain implements Cleaner<Gadget>, ContextInitializer<Gadget> {
    final DeleteControl delete = DeleteControl.noFinalizerRemoval();
    Gadget initialized;

    @Override
    public DeleteControl cleanup(Gadget resource, Context<Gadget> context) {
      return delete;
    }

    @Override
    public void initContext(Gadget primary, Context<Gadget> context) {
      initialized = primary;
    }
  }

  @Test
  void theWrapperIsACleanerOrAContextInitializerExactlyWhenTheUsersReconcilerIs() throws Exception {
    Gadget gadget = gadget();
    Plain plain = new Plain();
    Reconciler<Gadget> wrapped = GuardedReconciler.wrap(plain);
    assertThat(wrapped).isNotSameAs(plain).isNotInstanceOf(Cleaner.class).isNotInstanceOf(ContextInitializer.class);
    assertThat(wrapped.reconcile(gadget, null)).isSameAs(plain.update);
    assertThat(wrapped.prepareEventSources(null)).isSameAs(plain.sources);
    assertThat(wrapped.updateErrorStatus(gadget, null, new IllegalStateException())).isSameAs(plain.errorStatus);
    assertThat(wrapped).hasToString("Plain");
    assertThat(GuardedReconciler.wrap(wrapped)).as("wrapped once only").isSameAs(wrapped);

    Cleaning cleaning = new Cleaning();
    Reconciler<Gadget> cleaner = GuardedReconciler.wrap(cleaning);
    assertThat(cleaner).isInstanceOf(Cleaner.class).isNotInstanceOf(ContextInitializer.class);
    assertThat(((Cleaner<Gadget>) cleaner).cleanup(gadget, null)).isSameAs(cleaning.delete);

    Initializing initializing = new Initializing();
    Reconciler<Gadget> initializer = GuardedReconciler.wrap(initializing);
    assertThat(initializer).isInstanceOf(ContextInitializer.class).isNotInstanceOf(Cleaner.class);
    ((ContextInitializer<Gadget>) initializer).initContext(gadget, null);
    assertThat(initializing.initialized).isSameAs(gadget);

    Both both = new Both();
    Reconciler<Gadget> wrappedBoth = GuardedReconciler.wrap(both);
    assertThat(wrappedBoth).isInstanceOf(Cleaner.class).isInstanceOf(ContextInitializer.class);
    assertThat(((Cleaner<Gadget>) wrappedBoth).cleanup(gadget, null)).isSameAs(both.delete);
    ((ContextInitializer<Gadget>) wrappedBoth).initContext(gadget, null);
    assertThat(both.initialized).isSameAs(gadget);
  }

  @ParameterizedTest
  @MethodSource("notExceptions")
  void anErrorOfUpdateErrorStatusFailsTheReconciliation(Throwable thrown) {
    Plain plain = new Plain();
    plain.errorStatusThrows.set(thrown);
    Exception reconcileThrew = new IllegalStateException("what reconcile threw");
    assertThatThrownBy(() -> GuardedReconciler.wrap(plain).updateErrorStatus(gadget(), null, reconcileThrew))
        .isInstanceOf(IllegalStateException.class)
        .hasCause(thrown)
        .hasMessageContaining("the reconciler's updateErrorStatus of " + ResourceID.fromResource(gadget()))
        .satisfies(e -> assertThat(e.getSuppressed()).contains(reconcileThrew));
  }

  @ParameterizedTest
  @MethodSource("exceptions")
  void anExceptionOfUpdateErrorStatusPassesAsItIs(Exception thrown) {
    Plain plain = new Plain();
    plain.errorStatusThrows.set(thrown);
    assertThatThrownBy(() -> GuardedReconciler.wrap(plain).updateErrorStatus(gadget(), null, new Exception()))
        .isSameAs(thrown);
  }

  /** A reconciler whose reconcile, cleanup and initContext throw what it is given. */
  static final class Throwing extends Plain implements Cleaner<Gadget>, ContextInitializer<Gadget> {
    final Throwable thrown;

    Throwing(Throwable thrown) {
      this.thrown = thrown;
    }

    @Override
    public UpdateControl<Gadget> reconcile(Gadget resource, Context<Gadget> context) {
      UserErrorsTest.<RuntimeException>sneakyThrow(thrown);
      return null;
    }

    @Override
    public DeleteControl cleanup(Gadget resource, Context<Gadget> context) {
      UserErrorsTest.<RuntimeException>sneakyThrow(thrown);
      return null;
    }

    @Override
    public void initContext(Gadget primary, Context<Gadget> context) {
      UserErrorsTest.<RuntimeException>sneakyThrow(thrown);
    }
  }

  /** An OperatorService's operator has no ShardGate: the wrapper fails the reconciliation (review h-attack2). */
  @ParameterizedTest
  @MethodSource("notExceptions")
  void anErrorOfReconcileCleanupOrInitContextFailsTheReconciliationInTheWrapper(Throwable thrown) {
    Reconciler<Gadget> wrapped = GuardedReconciler.wrap(new Throwing(thrown));
    String resource = " of " + ResourceID.fromResource(gadget());
    assertThatThrownBy(() -> wrapped.reconcile(gadget(), null)).isInstanceOf(IllegalStateException.class)
        .hasCause(thrown).hasMessageContaining("the reconciler's reconcile" + resource);
    assertThatThrownBy(() -> ((Cleaner<Gadget>) wrapped).cleanup(gadget(), null))
        .isInstanceOf(IllegalStateException.class).hasCause(thrown)
        .hasMessageContaining("the reconciler's cleanup" + resource);
    assertThatThrownBy(() -> ((ContextInitializer<Gadget>) wrapped).initContext(gadget(), null))
        .isInstanceOf(IllegalStateException.class).hasCause(thrown)
        .hasMessageContaining("the reconciler's initContext" + resource);
  }

  /**
   * An Error whose message cannot be made (its getMessage throws, an Error too) still fails the reconciliation with
   * an exception that carries it: building the message must not throw past the wrapper (review h-attack2).
   */
  @Test
  void anErrorWhoseMessageThrowsStillBecomesAnException() {
    Error unprintable = new Error() {
      @Override
      public String getMessage() {
        throw new AssertionError("a message that cannot be made");
      }
    };
    Reconciler<Gadget> wrapped = GuardedReconciler.wrap(new Throwing(unprintable));
    assertThatThrownBy(() -> wrapped.reconcile(gadget(), null)).isInstanceOf(IllegalStateException.class)
        .hasCause(unprintable).hasMessageContaining("the reconciler's reconcile");
  }

  @ParameterizedTest
  @MethodSource("exceptions")
  void anExceptionOfReconcileCleanupOrInitContextPassesTheWrapperAsItIs(Exception thrown) {
    Reconciler<Gadget> wrapped = GuardedReconciler.wrap(new Throwing(thrown));
    assertThatThrownBy(() -> wrapped.reconcile(gadget(), null)).isSameAs(thrown);
    assertThatThrownBy(() -> ((Cleaner<Gadget>) wrapped).cleanup(gadget(), null)).isSameAs(thrown);
    assertThatThrownBy(() -> ((ContextInitializer<Gadget>) wrapped).initContext(gadget(), null)).isSameAs(thrown);
  }

  @Test
  void theGuardingOperatorRegistersTheWrapperWithTheConfigurationOfTheUsersClass() {
    try (KubernetesClient client = new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder().withMasterUrl("http://127.0.0.1:1/").withNamespace("ns").build()).build()) {
      GuardedReconciler.GuardingOperator operator =
          new GuardedReconciler.GuardingOperator(o -> o.withKubernetesClient(client).withCloseClientOnStop(false));
      Cleaning cleaning = new Cleaning();
      String name = operator.getConfigurationService().getConfigurationFor(cleaning).getName();
      RegisteredController<Gadget> registered = operator.register(cleaning);
      Controller<Gadget> controller = (Controller<Gadget>) registered;
      assertThat(controller.getReconciler()).isInstanceOf(GuardedReconciler.class).isInstanceOf(Cleaner.class);
      assertThat(((GuardedReconciler<Gadget>) controller.getReconciler()).user).isSameAs(cleaning);
      assertThat(controller.isCleaner()).isTrue();
      assertThat(controller.getConfiguration().getName()).isEqualTo(name);
      assertThat(controller.getConfiguration().getAssociatedReconcilerClassName())
          .isEqualTo(Cleaning.class.getCanonicalName());

      Plain plain = new Plain();
      assertThatThrownBy(() -> operator.register(plain, (io.javaoperatorsdk.operator.api.config
          .ControllerConfiguration<Gadget>) null))
          .as("no configuration: JOSDK's refusal names the user's class")
          .isInstanceOf(OperatorException.class)
          .hasMessageContaining(Plain.class.getCanonicalName());
    }
  }
}
