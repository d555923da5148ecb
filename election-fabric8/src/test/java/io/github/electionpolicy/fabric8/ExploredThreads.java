package io.github.electionpolicy.fabric8;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Real threads for one explored run of a runner, made and ended by the run itself, so that a controlled-
 * concurrency tester (Fray) owns every one of them: a {@link Loop} that is the runner's {@link RunnerLoop} on one
 * thread of its own, and an {@link Executor} for user code that starts a thread per task. Time is a
 * {@link #ticker()} that moves only when a test says so ({@link Loop#advance}): the runner's timers (renewals,
 * request timeouts, the stop deadline) fire then and only then, so a run has no sleep and no real clock in it.
 */
final class ExploredThreads implements AutoCloseable {

  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final Loop loop = new Loop();
  private final UserCode userCode = new UserCode();
  private final List<Thread> callers = new ArrayList<>();

  ExploredThreads() {
    loop.thread.start();
  }

  Ticker ticker() {
    return nanos::get;
  }

  RunnerLoop loop() {
    return loop;
  }

  /** The loop, to move time on with {@link Loop#advance}. */
  Loop timers() {
    return loop;
  }

  Executor userCode() {
    return userCode;
  }

  /** Starts a caller's thread (one of the test's own: a closer, an awaiter, an observer). */
  Thread caller(String name, Runnable body) {
    Thread thread = new Thread(body, name);
    synchronized (callers) {
      callers.add(thread);
    }
    thread.start();
    return thread;
  }

  /** Waits for the callers' threads. */
  void joinCallers() throws InterruptedException {
    for (Thread thread : snapshot(callers)) {
      thread.join();
    }
  }

  /** Ends the loop and waits for every thread of the run: callers, loop, user code. */
  @Override
  public void close() throws InterruptedException {
    joinCallers();
    loop.shutdown();
    loop.thread.join();
    // A user-code thread may hand one last task to the loop after it ended: dropped, the run is over.
    for (Thread thread : snapshot(userCode.threads)) {
      thread.join();
    }
  }

  private static List<Thread> snapshot(List<Thread> threads) {
    synchronized (threads) {
      return new ArrayList<>(threads);
    }
  }

  /** The runner's loop on one thread; timers wait for {@link #advance}. Thread-safe. */
  final class Loop implements RunnerLoop {
    private final Thread thread = new Thread(this::run, "election-loop");
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    private final PriorityQueue<Scheduled> timers = new PriorityQueue<>();
    private long sequence;
    private boolean shutdown;

    @Override
    public void execute(Runnable task) {
      synchronized (this) {
        if (!shutdown) {
          tasks.add(task);
          notifyAll();
        }
      }
    }

    @Override
    public Timer schedule(long delayNanos, Runnable task) {
      Scheduled scheduled;
      synchronized (this) {
        scheduled = new Scheduled(nanos.get() + Math.max(0, delayNanos), sequence++, task);
        timers.add(scheduled);
      }
      return () -> {
        synchronized (Loop.this) {
          timers.remove(scheduled);
        }
      };
    }

    @Override
    public boolean inLoop() {
      return Thread.currentThread() == thread;
    }

    /** Moves time on by {@code delta} and runs, on the loop, every timer due by then, in order. */
    void advance(long delta) {
      long now = nanos.addAndGet(delta);
      execute(() -> fireDue(now));
    }

    private void fireDue(long now) {
      while (true) {
        Scheduled next;
        synchronized (this) {
          next = timers.peek();
          if (next == null || next.at > now) {
            return;
          }
          timers.poll();
        }
        next.task.run();
      }
    }

    void shutdown() {
      synchronized (this) {
        shutdown = true;
        notifyAll();
      }
    }

    private void run() {
      while (true) {
        Runnable task;
        synchronized (this) {
          while (tasks.isEmpty() && !shutdown) {
            try {
              wait();
            } catch (InterruptedException e) {
              return;
            }
          }
          if (tasks.isEmpty()) {
            return;
          }
          task = tasks.poll();
        }
        task.run();
      }
    }
  }

  private record Scheduled(long at, long sequence, Runnable task) implements Comparable<Scheduled> {
    @Override
    public int compareTo(Scheduled other) {
      return at != other.at ? Long.compare(at, other.at) : Long.compare(sequence, other.sequence);
    }
  }

  /** A thread per task: the callback lanes keep each lane's tasks one at a time. */
  private static final class UserCode implements Executor {
    private final List<Thread> threads = new ArrayList<>();

    @Override
    public void execute(Runnable task) {
      Thread thread = new Thread(task, "election-user-code");
      synchronized (threads) {
        threads.add(thread);
      }
      thread.start();
    }
  }
}
