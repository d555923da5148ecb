package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ContextInitializer;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A user's reconciler as a {@link ShardedOperator} and an {@link OperatorService} register it: every call goes to the
 * user's, and an {@link Error} its {@code reconcile}, {@code cleanup}, {@code initContext} or {@code updateErrorStatus}
 * throws becomes an exception ({@link UserErrors}). JOSDK 5.3 catches exceptions only: an {@code Error} would leave the
 * resource marked as being processed for as long as the operator runs (a warm operator's whole process, a term's
 * operator the whole term, which lasts as long as the leader keeps its Lease; review h-attack2). As an exception, the
 * reconciliation fails as when {@code reconcile} threw an exception, and JOSDK retries it. JOSDK 5.3 calls {@code
 * updateErrorStatus} on the reconciliation's thread after {@code reconcile} threw, outside {@code
 * timeControllerExecution}, so outside a {@link ShardGate}'s catch: only the wrapper covers it.
 *
 * <p>JOSDK reads the controller's configuration from the user's class (its {@code @ControllerConfiguration}), before
 * the reconciler is wrapped: {@link GuardingOperator} wraps it only once the configuration was resolved. Of the
 * interfaces JOSDK 5.3 checks a registered reconciler for with {@code instanceof}, {@link Cleaner} and {@link
 * ContextInitializer}, the wrapper implements exactly those the user's reconciler does ({@link #wrap}).
 *
 * @param <P> the resource type
 */
class GuardedReconciler<P extends HasMetadata> implements Reconciler<P> {

  final Reconciler<P> user;

  private GuardedReconciler(Reconciler<P> user) {
    this.user = Objects.requireNonNull(user, "user");
  }

  /**
   * The wrapper of {@code user}: a {@link Cleaner} if it is one, a {@link ContextInitializer} if it is one; {@code
   * user} itself if it is already wrapped.
   */
  @SuppressWarnings("unchecked")
  static <P extends HasMetadata> Reconciler<P> wrap(Reconciler<P> user) {
    if (user instanceof GuardedReconciler) {
      return user;
    }
    boolean cleaner = user instanceof Cleaner;
    boolean initializer = user instanceof ContextInitializer;
    if (cleaner && initializer) {
      return new CleaningInitializing<>(user);
    }
    if (cleaner) {
      return new Cleaning<>(user);
    }
    if (initializer) {
      return new Initializing<>(user);
    }
    return new GuardedReconciler<>(user);
  }

  @Override
  public UpdateControl<P> reconcile(P resource, Context<P> context) throws Exception {
    try {
      return user.reconcile(resource, context);
    } catch (Exception exception) {
      throw exception;
    } catch (Throwable error) {
      // An OperatorService's operator has no ShardGate around it: the wrapper is what turns the Error into a failure.
      // A ShardedOperator's gate catches an Error of the whole execution too, whose other user code (the user's
      // Metrics, a dependent's condition) only it covers; what the wrapper converted passes it as an exception.
      throw UserErrors.failed("the reconciler's reconcile", ResourceID.fromResource(resource), error);
    }
  }

  /** Runs a cleaner's {@code cleanup}; an {@link Error} becomes an exception, as in {@link #reconcile}. */
  @SuppressWarnings("unchecked")
  DeleteControl cleanUp(P resource, Context<P> context) throws Exception {
    try {
      return ((Cleaner<P>) user).cleanup(resource, context);
    } catch (Exception exception) {
      throw exception;
    } catch (Throwable error) {
      throw UserErrors.failed("the reconciler's cleanup", ResourceID.fromResource(resource), error);
    }
  }

  /** Runs a context initializer's {@code initContext}; an {@link Error} becomes an exception, as in reconcile. */
  @SuppressWarnings("unchecked")
  void initialize(P primary, Context<P> context) {
    try {
      ((ContextInitializer<P>) user).initContext(primary, context);
    } catch (Exception exception) {
      throw exception; // precise rethrow: unchecked only (or a checked one thrown sneakily), as JOSDK would see it
    } catch (Throwable error) {
      throw UserErrors.failed("the reconciler's initContext", ResourceID.fromResource(primary), error);
    }
  }

  @Override
  public List<EventSource<?, P>> prepareEventSources(EventSourceContext<P> context) {
    return user.prepareEventSources(context); // at registration: a throw fails the operator's start
  }

  @Override
  public ErrorStatusUpdateControl<P> updateErrorStatus(P resource, Context<P> context, Exception e) {
    try {
      return user.updateErrorStatus(resource, context, e);
    } catch (Exception exception) {
      throw exception; // JOSDK catches it: a failed reconciliation (a checked one thrown sneakily too)
    } catch (Throwable error) {
      IllegalStateException failed = UserErrors.failed("the reconciler's updateErrorStatus",
          ResourceID.fromResource(resource), error);
      failed.addSuppressed(e); // what reconcile threw, which the handler was handling
      throw failed;
    }
  }

  @Override
  public String toString() {
    return user.toString();
  }

  /** A user's reconciler that is a {@link Cleaner}. */
  private static class Cleaning<P extends HasMetadata> extends GuardedReconciler<P> implements Cleaner<P> {
    Cleaning(Reconciler<P> user) {
      super(user);
    }

    @Override
    public DeleteControl cleanup(P resource, Context<P> context) throws Exception {
      return cleanUp(resource, context);
    }
  }

  /** A user's reconciler that is a {@link ContextInitializer}. */
  private static final class Initializing<P extends HasMetadata> extends GuardedReconciler<P>
      implements ContextInitializer<P> {
    Initializing(Reconciler<P> user) {
      super(user);
    }

    @Override
    public void initContext(P primary, Context<P> context) {
      initialize(primary, context);
    }
  }

  /** A user's reconciler that is both a {@link Cleaner} and a {@link ContextInitializer}. */
  private static final class CleaningInitializing<P extends HasMetadata> extends Cleaning<P>
      implements ContextInitializer<P> {
    CleaningInitializing(Reconciler<P> user) {
      super(user);
    }

    @Override
    public void initContext(P primary, Context<P> context) {
      initialize(primary, context);
    }
  }

  /**
   * The {@link Operator} a {@link ShardedOperator} hands its {@link ShardedRegistration}: each reconciler registered
   * with it is registered wrapped. Every {@code register} of JOSDK 5.3 ends in {@link #register(Reconciler,
   * ControllerConfiguration)}, the others with the configuration resolved from the user's reconciler; so the
   * configuration is always the user's class's (or the one the user passed), never the wrapper's.
   */
  static final class GuardingOperator extends Operator {

    GuardingOperator(Consumer<ConfigurationServiceOverrider> configuration) {
      super(configuration);
    }

    @Override
    public <P extends HasMetadata> RegisteredController<P> register(Reconciler<P> reconciler,
        ControllerConfiguration<P> configuration) {
      // No configuration: JOSDK's refusal names the user's class.
      return super.register(configuration == null ? reconciler : wrap(reconciler), configuration);
    }
  }
}
