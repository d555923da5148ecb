package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.fabric8.TestTerms;
import io.github.electionpolicy.josdk.sample.Gadget;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tasks a reconciliation runs on the workflow executor, as JOSDK 5.3's {@code NodeExecutor} runs a managed
 * dependent: the task tells the workflow it is done in a {@code finally}, and only then does its {@link Error} leave it,
 * into the executor's {@code FutureTask}. The reconciliation, whose workflow returned meanwhile, fails with that
 * {@code Error} all the same (review h-attack2; the JOSDK case end to end is {@code ShardedOperatorDependentErrorTest}).
 */
class ShardGateWorkflowTasksTest {

  private final ShardOwnership ownership = new ShardOwnership(Shards.of(1), null, (client, term) -> client);
  private final ShardGate gate = new ShardGate(Metrics.NOOP, ownership);
  private final ExecutorService pool = Executors.newSingleThreadExecutor();
  private final ExecutorService workflows = new ShardContextExecutor(pool, gate);

  @AfterEach
  void shutDown() {
    pool.shutdownNow();
  }

  /** What user code does: may throw anything. */
  interface Body {
    Object run() throws Exception;
  }

  /** Runs {@code body} as the execution of an owned reconciliation of g-0, as JOSDK's dispatcher does. */
  private Object reconcile(Body body) throws Exception {
    ownership.own(0, TestTerms.valid("pod-a"));
    Gadget gadget = Gadget.named("ns", "g-0");
    gadget.getMetadata().setUid("uid-0");
    gate.reconciliationStarted(gadget, Map.of());
    try {
      return gate.timeControllerExecution(new Metrics.ControllerExecution<Object>() {
        @Override
        public String name() {
          return "reconcile";
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
          return body.run();
        }
      });
    } finally {
      gate.reconciliationFinished(gadget, null, Map.of());
    }
  }

  /**
   * A task as JOSDK's NodeExecutor: {@code finished} counted down in its finally, before {@code thrown} leaves it; and
   * it leaves only once the execution is about to return ({@code returning}), as on a busy machine.
   */
  private Runnable node(Throwable thrown, CountDownLatch finished, CountDownLatch returning) {
    return () -> {
      try {
        sneakyThrow(thrown);
      } finally {
        finished.countDown();
        await(returning);
      }
    };
  }

  @Test
  void anErrorThatLeavesADependentsTaskAfterTheWorkflowReturnedFailsTheReconciliation() {
    AssertionError thrown = new AssertionError("a bug in the dependent");
    CountDownLatch finished = new CountDownLatch(1);
    CountDownLatch returning = new CountDownLatch(1);
    assertThatThrownBy(() -> reconcile(() -> {
      workflows.submit(node(thrown, finished, returning));
      await(finished); // the workflow's wait: over before the Error left the task
      returning.countDown();
      return "reconciled";
    })).isInstanceOf(IllegalStateException.class)
        .hasCause(thrown)
        .hasMessageContaining("a managed dependent (a task on the workflow executor) of the reconciler's reconcile");
  }

  @Test
  void anErrorOfATaskThatATaskSubmittedFailsTheReconciliationToo() {
    AssertionError thrown = new AssertionError("a bug in the second dependent");
    CountDownLatch finished = new CountDownLatch(1);
    CountDownLatch returning = new CountDownLatch(1);
    assertThatThrownBy(() -> reconcile(() -> {
      // The first dependent submits the next from its workflow thread, as JOSDK's workflow does once it is ready.
      workflows.submit(() -> workflows.submit(node(thrown, finished, returning)));
      await(finished);
      returning.countDown();
      return "reconciled";
    })).isInstanceOf(IllegalStateException.class).hasCause(thrown);
  }

  @Test
  void anExceptionOfATaskIsLeftToJosdk() throws Exception {
    // JOSDK records a dependent's exception as the workflow's error itself, and fails the reconciliation with it.
    Future<?>[] task = new Future<?>[1];
    assertThat(reconcile(() -> {
      task[0] = workflows.submit(() -> {
        throw new IllegalArgumentException("a failed dependent");
      });
      await(task[0]);
      return "reconciled";
    })).isEqualTo("reconciled");
  }

  /**
   * An {@code Error} the reconciler read from its task's {@code Future} is its own to handle (review h-rev): a
   * reconciler that probes an optional library on the workflow executor and falls back when the probe fails with a
   * {@link NoClassDefFoundError} succeeds, as under plain JOSDK; it must not fail, and be retried, forever.
   */
  @Test
  void anErrorTheReconcilerReadFromItsTasksFutureIsItsOwnToHandle() throws Exception {
    NoClassDefFoundError missing = new NoClassDefFoundError("an optional library");
    assertThat(reconcile(() -> {
      Future<?> probe = workflows.submit(() -> {
        throw missing;
      });
      try {
        probe.get(30, TimeUnit.SECONDS);
        return "with the library";
      } catch (ExecutionException failed) {
        assertThat(failed).hasCause(missing);
        return "without it";
      }
    })).isEqualTo("without it");
  }

  /** The same through invokeAny, which reads the failed task's Future itself and returns the other's result. */
  @Test
  void anErrorOfATaskInvokeAnyPassedOverIsHandledToo() throws Exception {
    assertThat(reconcile(() -> workflows.invokeAny(List.<Callable<String>>of(() -> {
      throw new NoClassDefFoundError("an optional library");
    }, () -> "the fallback")))).isEqualTo("the fallback");
  }

  /** An Error of a task whose Future nobody read still fails the reconciliation, next to one that was read. */
  @Test
  void anUnreadErrorStillFailsTheReconciliationWhenAnotherWasRead() {
    AssertionError unread = new AssertionError("a bug in the dependent");
    CountDownLatch finished = new CountDownLatch(1);
    CountDownLatch returning = new CountDownLatch(1);
    assertThatThrownBy(() -> reconcile(() -> {
      Future<?> probe = workflows.submit(() -> {
        throw new NoClassDefFoundError("an optional library");
      });
      await(probe);
      workflows.submit(node(unread, finished, returning));
      await(finished);
      returning.countDown();
      return "reconciled";
    })).isInstanceOf(IllegalStateException.class).hasCause(unread);
  }

  /**
   * A future read twice hands over its own task's failure once: the same {@code Error} object thrown by another task
   * (the JVM may throw one preallocated {@link OutOfMemoryError} from several places) still fails the reconciliation.
   */
  @Test
  void aFutureReadTwiceDoesNotTakeAwayAnotherTasksFailureThatIsTheSameObject() {
    OutOfMemoryError shared = new OutOfMemoryError("preallocated");
    assertThatThrownBy(() -> reconcile(() -> {
      Future<?> probe = workflows.submit(() -> {
        throw shared;
      });
      await(probe);
      workflows.submit(() -> { // a dependent's task, whose future nobody reads
        throw shared;
      });
      await(workflows.submit(() -> { })); // the pool's one thread: the dependent's task has ended
      await(probe); // read again
      return "reconciled";
    })).isInstanceOf(IllegalStateException.class).hasCause(shared);
  }

  @Test
  void aTaskThatOutlivesTheReconciliationIsWaitedForBriefly() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    long began = System.nanoTime();
    try {
      assertThat(reconcile(() -> {
        workflows.submit(() -> {
          started.countDown();
          await(release);
        });
        await(started);
        return "reconciled";
      })).isEqualTo("reconciled");
      assertThat(System.nanoTime() - began).isGreaterThanOrEqualTo(WorkflowTasks.UNWINDING.toNanos());
    } finally {
      release.countDown();
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static void await(Future<?> task) {
    try {
      task.get(30, TimeUnit.SECONDS);
    } catch (Exception ended) {
      // ended, however
    }
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneakyThrow(Throwable t) throws T {
    throw (T) t;
  }
}
