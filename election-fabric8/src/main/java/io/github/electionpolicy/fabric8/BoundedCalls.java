package io.github.electionpolicy.fabric8;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Lease calls on the shared workers, at most {@code limit} in flight at once; one more is rejected at once.
 * {@code submit} and a future's {@code cancel(true)} work as on any pool (the call's worker is interrupted
 * while it runs that call only). Shared by every runner, so it is never shut down: those methods refuse.
 */
final class BoundedCalls extends AbstractExecutorService {
  private final java.util.concurrent.Executor workers;
  private final SharedPools.InFlight bound;

  BoundedCalls(ExecutorService workers, int limit) {
    this(workers, new SharedPools.InFlight(limit, "Lease calls"));
  }

  BoundedCalls(ExecutorService workers, SharedPools.InFlight bound) {
    this.workers = SharedPools.handOverTo(workers);
    this.bound = bound;
  }

  @Override
  public void execute(Runnable call) {
    if (!bound.tryAcquire()) {
      throw new RejectedExecutionException(bound.refusal());
    }
    try {
      workers.execute(() -> {
        try {
          call.run();
        } finally {
          bound.release();
        }
      });
    } catch (RejectedExecutionException e) {
      bound.release(); // refused, or no thread could be started for it (see handOverTo)
      throw e;
    }
  }

  /** Calls in flight now. */
  int inFlight() {
    return bound.inFlight();
  }

  @Override
  public void shutdown() {
    throw new UnsupportedOperationException("the shared I/O pool is never shut down");
  }

  @Override
  public List<Runnable> shutdownNow() {
    throw new UnsupportedOperationException("the shared I/O pool is never shut down");
  }

  @Override
  public boolean isShutdown() {
    return false;
  }

  @Override
  public boolean isTerminated() {
    return false;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return false;
  }
}
