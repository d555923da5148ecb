package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a {@link ShardedOperator} decides, for each reconciliation, whether it is this replica's: JOSDK's {@link
 * Metrics}, the user's wrapped. JOSDK 5.3 calls {@code reconciliationStarted} on the reconciliation thread with the
 * resource as the cache has it now, right before it dispatches the reconciliation, and {@code reconciliationFinished}
 * in a {@code finally} once it is done with it (its own writes after the reconciler included); between the two it
 * runs the reconciler (and managed dependents) inside {@code timeControllerExecution}. So:
 * <ul>
 *   <li>{@code reconciliationStarted} enters the resource's shard ({@link ShardOwnership#enter}): the shard counts
 *       the reconciliation as running, and a stop of the shard waits for it, only if the shard is owned here under a
 *       valid term;
 *   <li>{@code timeControllerExecution} runs the reconciler (or cleaner) only if the reconciliation entered an owned
 *       shard, the shard is still owned here under that term (no stop of it began since) and the term is still valid;
 *       otherwise it answers as a reconciler that has nothing to do ({@code
 *       UpdateControl.noUpdate()}, {@code DeleteControl.noFinalizerRemoval()}), which leaves JOSDK's bookkeeping of
 *       the resource as after any successful reconciliation (skipping the task would leave the resource marked as
 *       being processed, and no later event would reconcile it);
 *   <li>{@code reconciliationFinished} exits the shard.
 * </ul>
 * An {@link Error} the reconciler throws (a {@link VirtualMachineError} included) is logged and reaches JOSDK as an
 * {@link IllegalStateException} that carries it ({@link UserErrors}): a failed reconciliation, retried as JOSDK retries
 * any, instead of one JOSDK never ends (it catches exceptions only), which would keep the resource from being
 * reconciled again. Its {@code updateErrorStatus}, which JOSDK calls outside {@code timeControllerExecution}, is
 * covered by {@link GuardedReconciler}. An {@code Error} of a managed dependent, which JOSDK only logs on its workflow
 * thread, fails the reconciliation too: the tasks the execution runs on the workflow executor ({@link
 * ShardContextExecutor}) are counted, and the execution waits for them to end ({@link WorkflowTasks}).
 * What the user's metrics throw from the callbacks JOSDK makes around a
 * reconciliation ({@code reconciliationSubmitted}, {@code reconciliationStarted}, {@code
 * reconciliationFinished}, {@code reconciliationSucceeded}, {@code reconciliationFailed}, {@code cleanupDone}), an
 * exception or an {@link Error}, is logged and goes no further ({@link UserErrors#metricsFailed}): JOSDK catches
 * nothing there, and a throw from {@code reconciliationSubmitted} or {@code reconciliationStarted} would leave the
 * resource marked as being processed for the process's life (review h-attack2). {@code eventReceived}, which JOSDK calls
 * before it marks the event, passes what it throws (a shard's start that fires the event fails), and {@code
 * controllerRegistered}, at registration, fails the operator's start.
 * The entry is kept on the reconciliation's thread between the calls, where {@link ShardFence} reads it to check the
 * writes the reconciliation sends. A reconciliation may begin inside another on the same thread, while the outer one's
 * reconciler runs, its {@code updateErrorStatus} included (a pool with a {@code CallerRunsPolicy} runs the task an
 * event submits on the submitting thread): the entries are kept innermost last, and each reconciliation exits only
 * its own (its resource's, as its {@code reconciliationFinished} names it), so the outer one still counts as running,
 * and its writes are still checked, once the inner one finished (review r2, findings 1 and 2; review h-attack). Thread-safe: JOSDK calls it from its
 * reconciliation threads; the user's metrics are called as JOSDK would call them.
 */
final class ShardGate implements Metrics {

  private static final Logger LOG = LoggerFactory.getLogger(ShardedOperator.class);

  private final Metrics user;
  private final ShardOwnership ownership;
  // The reconciliations this thread is in, innermost last: JOSDK may run one inside another on the same thread (a
  // pool with a CallerRunsPolicy runs a task on the thread that submits it, which may be a reconciliation's own, or a
  // managed dependent's task, see runAs), and each must find its own entry again once the inner one is done.
  // Null on a thread in none: a thread that only reads current() (a write checked by ShardFence) keeps nothing.
  private final ThreadLocal<java.util.ArrayDeque<Frame>> frames = new ThreadLocal<>();

  /**
   * A reconciliation this thread is in: {@code entered} when its {@code reconciliationStarted} ran here (its {@code
   * reconciliationFinished} exits it), not when {@link #runAs} carries another thread's; {@code running} while its
   * reconciler (or a task of it) runs here, when a reconciliation may begin inside it.
   */
  private static final class Frame {
    final ShardOwnership.Entry entry;
    final boolean entered;
    // The namespace/name of the resource its reconciliationStarted named (what its reconciliationFinished names
    // again); null for a frame runAs carries.
    final String resource;
    boolean running;
    // The tasks the reconciliation runs on the workflow executor while its execution runs (timeControllerExecution),
    // the submitter's for a frame runAs carries; null otherwise.
    WorkflowTasks tasks;

    Frame(ShardOwnership.Entry entry, boolean entered, boolean running) {
      this(entry, entered, running, null);
    }

    Frame(ShardOwnership.Entry entry, boolean entered, boolean running, String resource) {
      this.entry = entry;
      this.entered = entered;
      this.running = running;
      this.resource = resource;
    }

    /** Whether this is the frame reconciliationStarted entered for {@code resource}. */
    boolean enteredFor(String resource) {
      return entered && resource != null && resource.equals(this.resource);
    }
  }

  /**
   * The namespace/name of {@code resource}: what identifies a reconciliation's frame, JOSDK reconciling a resource at
   * most once at a time; null for none (JOSDK's reconciliationFinished after a run it skipped before its start: the
   * resource gone from the cache).
   */
  private static String keyOf(HasMetadata resource) {
    if (resource == null || resource.getMetadata() == null || resource.getMetadata().getName() == null) {
      return null;
    }
    return resource.getMetadata().getNamespace() + "/" + resource.getMetadata().getName();
  }

  ShardGate(Metrics user, ShardOwnership ownership) {
    this.user = Objects.requireNonNull(user, "user");
    this.ownership = Objects.requireNonNull(ownership, "ownership");
  }

  /** This thread's frames, made at its first reconciliation. */
  private java.util.ArrayDeque<Frame> stack() {
    java.util.ArrayDeque<Frame> stack = frames.get();
    if (stack == null) {
      stack = new java.util.ArrayDeque<>();
      frames.set(stack);
    }
    return stack;
  }

  /** The innermost reconciliation this thread is in, or null. */
  private Frame innermost() {
    java.util.ArrayDeque<Frame> stack = frames.get();
    return stack == null ? null : stack.peekLast();
  }

  @Override
  public void reconciliationStarted(HasMetadata resource, Map<String, Object> metadata) {
    java.util.ArrayDeque<Frame> stack = stack();
    String key = keyOf(resource);
    // A reconciliation begins inside another while that one's reconciler runs here, or its updateErrorStatus (which
    // JOSDK calls after timeControllerExecution returned), or JOSDK's own work after it: the outer one is still
    // running, whatever its frame's running says. Only a frame of the same resource was never finished (never seen:
    // JOSDK pairs the calls, and reconciles a resource once at a time): exit it rather than keep its shard busy.
    while (!stack.isEmpty() && !stack.peekLast().running && stack.peekLast().enteredFor(key)) {
      ownership.exit(stack.removeLast().entry);
    }
    stack.addLast(new Frame(ownership.enter(resource), true, false, key));
    callUser("reconciliationStarted", resource, () -> user.reconciliationStarted(resource, metadata));
  }

  @Override
  public void reconciliationFinished(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
    try {
      callUser("reconciliationFinished", resource, () -> user.reconciliationFinished(resource, retryInfo, metadata));
    } finally {
      java.util.ArrayDeque<Frame> stack = stack();
      // Its own frame only: never the reconciliation it ran inside (JOSDK calls reconciliationFinished also for a run
      // it skipped before reconciliationStarted, the resource gone from the cache, naming no resource), nor one runAs
      // carries.
      if (!stack.isEmpty() && !stack.peekLast().running && stack.peekLast().enteredFor(keyOf(resource))) {
        ownership.exit(stack.removeLast().entry);
      }
      if (stack.isEmpty()) {
        frames.remove();
      }
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T> T timeControllerExecution(ControllerExecution<T> execution) throws Exception {
    Frame frame = innermost();
    ShardOwnership.Entry entry = frame == null ? null : frame.entry;
    // Still held: a stop of the shard that began after the reconciliation entered takes the shard away, and the
    // reconciler must then not run (the stop waits for this reconciliation, not for a reconciler begun after it).
    if (entry != null && entry.owned() && entry.term().isValid() && ownership.holds(entry)) {
      boolean was = frame.running;
      WorkflowTasks outerTasks = frame.tasks;
      WorkflowTasks tasks = new WorkflowTasks();
      frame.running = true;
      frame.tasks = tasks;
      try {
        return user.timeControllerExecution(new WithItsTasks<>(execution, tasks));
      } catch (Exception exception) {
        throw exception;
      } catch (Throwable error) {
        // JOSDK 5.3 catches exceptions only: an Error would skip its end of the reconciliation and leave the resource
        // marked as being processed for as long as the operator runs, which a warm operator does for the whole
        // process, so no later event, nor a move of its shard back here, would reconcile it again (review r2,
        // finding 3). As an exception, it is a failed reconciliation that JOSDK's retry handles. A
        // VirtualMachineError too (review h-attack): rethrown, it would end this thread only, not the process, and
        // the runner would keep the shard's Lease for a resource nothing reconciles any more (see UserErrors).
        // GuardedReconciler converts the Errors of the reconciler's own methods, and this catch is needed besides it:
        // it alone covers the rest of the execution, the user's timeControllerExecution (their Metrics) and the user
        // code the managed workflow runs on this thread (a dependent's activation or reconcile condition). Nor can the
        // wrapper go: an OperatorService's operator has no gate, and updateErrorStatus runs outside this execution.
        // An Error of the reconciler's own methods reaches here already an exception, and passes: converted once.
        throw UserErrors.failed("the reconciler's " + execution.name(), execution.resourceID(), error);
      } finally {
        frame.running = was;
        frame.tasks = outerTasks;
      }
    }
    // Not this replica's (or its term ended, or its shard was stopped, meanwhile): what a reconciler with nothing to
    // do answers.
    switch (execution.name()) {
      case "reconcile":
        return (T) UpdateControl.noUpdate();
      case "cleanup":
        return (T) DeleteControl.noFinalizerRemoval();
      default:
        throw new IllegalStateException("JOSDK ran a controller execution named '" + execution.name() + "' for "
            + execution.resourceID() + ", which a ShardedOperator does not know how to skip; it runs JOSDK "
            + "5.3's 'reconcile' and 'cleanup' only");
    }
  }

  /**
   * A controller execution as the user's metrics run it: once it returned, it waits for the tasks it ran on the
   * workflow executor to end ({@link WorkflowTasks#UNWINDING} at most), and fails if one of them threw an {@link
   * Error}. JOSDK 5.3 only logs the {@code Error} of a managed dependent (its {@code NodeExecutor} rethrows it into the
   * executor's {@code FutureTask}, after its {@code finally} told the workflow the dependent is done): the workflow
   * returns with no error, the reconciler runs, and the reconciliation would succeed with the dependent neither
   * reconciled nor failed, and not be retried (review h-attack2). Inside the user's {@code timeControllerExecution}, so
   * that its timing sees the failure as the reconciler's. Never waits for a task on that task's own thread: a task run
   * on the execution's thread (a pool's {@code CallerRunsPolicy}) has ended before the execution returns, and an
   * execution that begins inside a task (a reconciliation nested on a workflow thread) waits for tasks of its own only.
   * The wait is bounded all the same.
   */
  private static final class WithItsTasks<T> implements ControllerExecution<T> {
    private final ControllerExecution<T> execution;
    private final WorkflowTasks tasks;

    WithItsTasks(ControllerExecution<T> execution, WorkflowTasks tasks) {
      this.execution = execution;
      this.tasks = tasks;
    }

    @Override
    public T execute() throws Exception {
      T result = execution.execute();
      // Only once it returned: a failed execution fails the reconciliation anyway, and JOSDK logged the Error.
      Throwable lost = tasks.awaitEnd(WorkflowTasks.UNWINDING);
      if (lost != null) {
        throw UserErrors.failed("a managed dependent (a task on the workflow executor) of the reconciler's "
            + execution.name(), execution.resourceID(), lost);
      }
      int running = tasks.running();
      if (running > 0) {
        LOG.warn("The {} of {} waited {} for its {} task(s) on the workflow executor to end, and goes on without them: "
            + "an Error they throw from now on does not fail it", execution.name(), execution.resourceID(),
            WorkflowTasks.UNWINDING, running);
      }
      return result;
    }

    @Override
    public String name() {
      return execution.name();
    }

    @Override
    public String controllerName() {
      return execution.controllerName();
    }

    @Override
    public String successTypeName(T result) {
      return execution.successTypeName(result);
    }

    @Override
    public ResourceID resourceID() {
      return execution.resourceID();
    }

    @Override
    public Map<String, Object> metadata() {
      return execution.metadata();
    }
  }

  /** The reconciliation that runs on this thread (the innermost): what it entered; null outside any reconciliation. */
  ShardOwnership.Entry current() {
    Frame frame = innermost();
    return frame == null ? null : frame.entry;
  }

  /** The tasks of the reconciliation whose execution runs on this thread (the innermost), or null. */
  WorkflowTasks tasks() {
    Frame frame = innermost();
    return frame == null ? null : frame.tasks;
  }

  /**
   * {@code task}, submitted on this thread to the workflow executor, as it runs there: as part of the reconciliation
   * that runs here now (a managed dependent's task, submitted by the reconciliation's thread or by another of its
   * tasks), counted among its tasks ({@link WorkflowTasks}).
   */
  Runnable carried(Runnable task) {
    Frame frame = innermost();
    ShardOwnership.Entry reconciliation = frame == null ? null : frame.entry;
    WorkflowTasks tasks = frame == null ? null : frame.tasks;
    return () -> runAs(reconciliation, tasks, task);
  }

  /**
   * Runs {@code task} as part of {@code reconciliation}, and then puts back what this thread had; a reconciliation the
   * task begins here runs inside it. A reconciliation the task began and never finished is exited then.
   */
  private void runAs(ShardOwnership.Entry reconciliation, WorkflowTasks tasks, Runnable task) {
    java.util.ArrayDeque<Frame> stack = stack();
    Frame carried = new Frame(reconciliation, false, true);
    carried.tasks = tasks;
    stack.addLast(carried);
    if (tasks != null) {
      tasks.started();
    }
    try {
      task.run();
    } catch (Throwable thrown) { // a task run by execute, not submit, whose Error no FutureTask keeps
      if (tasks != null) {
        tasks.threw(thrown);
      }
      throw thrown;
    } finally {
      try {
        while (!stack.isEmpty()) {
          Frame top = stack.removeLast();
          if (top == carried) {
            break;
          }
          if (top.entered) {
            ownership.exit(top.entry);
          }
        }
        if (stack.isEmpty()) {
          frames.remove();
        }
      } finally {
        if (tasks != null) {
          tasks.ended(); // last: what the task threw is recorded, and its thread has nothing of it left
        }
      }
    }
  }

  /** Whether the reconciliation on this thread runs under an owned shard's valid term (for tests). */
  boolean owned() {
    ShardOwnership.Entry entry = current();
    return entry != null && entry.owned() && entry.term().isValid();
  }

  @Override
  public void controllerRegistered(Controller<? extends HasMetadata> controller) {
    user.controllerRegistered(controller);
  }

  @Override
  public void eventReceived(Event event, Map<String, Object> metadata) {
    // Passes what it throws: JOSDK drops the event before marking it (no resource is left being processed), and a
    // shard's start that fires it fails and undoes itself (ShardedOperatorStopTest).
    user.eventReceived(event, metadata);
  }

  @Override
  public void reconciliationSubmitted(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
    callUser("reconciliationSubmitted", resource, () -> user.reconciliationSubmitted(resource, retryInfo, metadata));
  }

  @Override
  public void reconciliationFailed(HasMetadata resource, RetryInfo retryInfo, Exception exception,
      Map<String, Object> metadata) {
    callUser("reconciliationFailed", resource,
        () -> user.reconciliationFailed(resource, retryInfo, exception, metadata));
  }

  @Override
  public void reconciliationSucceeded(HasMetadata resource, Map<String, Object> metadata) {
    callUser("reconciliationSucceeded", resource, () -> user.reconciliationSucceeded(resource, metadata));
  }

  @Override
  public void cleanupDone(ResourceID resourceID, Map<String, Object> metadata) {
    callUser("cleanupDone", resourceID, () -> user.cleanupDone(resourceID, metadata));
  }

  /**
   * Makes a callback of the user's metrics around a reconciliation: what it throws, an exception or an {@link Error},
   * is logged and goes no further ({@link UserErrors#metricsFailed}), since JOSDK 5.3 catches nothing there.
   */
  private static void callUser(String callback, Object resource, Runnable call) {
    try {
      call.run();
    } catch (Throwable thrown) {
      UserErrors.metricsFailed(callback, resource, thrown);
    }
  }
}
