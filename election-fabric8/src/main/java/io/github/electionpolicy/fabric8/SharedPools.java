package io.github.electionpolicy.fabric8;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The two pools every runner of the JVM shares beside its {@link RunnerLoop}: one for user code (services,
 * listeners, loss handlers, exiters), which grows with the callbacks that run at once and shrinks when they
 * are idle, so a {@code stop()} that hangs holds one thread and never the others' callbacks; and one for the
 * blocking Lease calls, each bounded by its request timeout, which keeps {@value #IO_THREADS} threads and grows,
 * up to {@value #IO_MAX_THREADS}, only while that many calls are in flight at once: calls that hang (runners cut
 * off from their API server) take threads of their own instead of queueing a healthy runner's renewal behind
 * them. A call refused past that bound fails at once, as a failed call, and the elector retries it.
 */
final class SharedPools {

  static final int IO_THREADS = 8;
  static final int IO_MAX_THREADS = 64;
  private static final long KEEP_ALIVE_SECONDS = 10;

  private static final ExecutorService USER_CODE = new ThreadPoolExecutor(0, Integer.MAX_VALUE,
      KEEP_ALIVE_SECONDS, TimeUnit.SECONDS, new SynchronousQueue<>(), daemon("election-callback-"));

  private static final ExecutorService IO;

  static {
    ThreadPoolExecutor io = new ThreadPoolExecutor(IO_THREADS, IO_MAX_THREADS, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS,
        new SynchronousQueue<>(), daemon("election-io-"));
    io.allowCoreThreadTimeOut(true);
    IO = io;
  }

  private SharedPools() {}

  /** Runs user code; never the Lease loop's work. */
  static ExecutorService userCode() {
    return USER_CODE;
  }

  /** Runs blocking Lease calls. */
  static ExecutorService io() {
    return IO;
  }

  private static java.util.concurrent.ThreadFactory daemon(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return task -> {
      Thread t = new Thread(task, prefix + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
