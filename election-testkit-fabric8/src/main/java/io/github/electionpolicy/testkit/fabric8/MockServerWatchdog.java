package io.github.electionpolicy.testkit.fabric8;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Breaks a self-deadlock of fabric8's mock API server (mockwebserver 8.0.0). When a watch's WebSocket
 * closes while the server is sending it an event, the Vert.x event loop runs {@code
 * WatchEventsListener.onClosed} (or {@code onFailure}, when the connection drops abruptly), which waits
 * for the watch's sender thread, which waits (up to 30 s, in {@code VertxMockWebSocket.awaitWrite}) for a
 * write that only that blocked event loop can perform. The whole server then stalls, and every replica's
 * Lease calls time out, which has nothing to do with the behaviour under test. The watchdog interrupts the
 * waiting sender so the event loop goes on. One daemon thread per JVM, started by the first embedded
 * Lease API.
 *
 * <p>It must not disturb the test's JVM while nothing is stuck. Reading a thread's stack stops every thread of the
 * JVM at a safepoint, for 10 to 70 ms on a loaded machine with a few hundred threads, so a watchdog that read all
 * stacks every 50 ms froze the JVM for a tenth to a quarter of its time under load and skewed every timing a test
 * took. So each pass reads only thread states (no safepoint) and the names of live threads; it reads a stack only
 * of a Vert.x event-loop thread it found waiting in two passes in a row (the stall lasts up to 30 s; an event loop
 * waits nowhere else for long), and all stacks only once such a thread waits in {@code onClosed} or
 * {@code onFailure}.
 */
final class MockServerWatchdog {

  private static final long PERIOD_MILLIS = 50;

  static {
    MockServerWatchdog watchdog = new MockServerWatchdog(MockServerWatchdog::liveThreads,
        MockServerWatchdog::isEventLoop, Thread::getStackTrace);
    Thread thread = new Thread(watchdog::watch, "mock-server-watchdog");
    thread.setDaemon(true);
    thread.start();
  }

  private final Supplier<Thread[]> threads;
  private final Predicate<Thread> eventLoop;
  private final Function<Thread, StackTraceElement[]> stacks;
  /** The event-loop threads the last pass found waiting. */
  private Set<Thread> waitingBefore = Set.of();

  MockServerWatchdog(Supplier<Thread[]> threads, Predicate<Thread> eventLoop,
      Function<Thread, StackTraceElement[]> stacks) {
    this.threads = threads;
    this.eventLoop = eventLoop;
    this.stacks = stacks;
  }

  /** Starts the watchdog once per JVM. */
  static void ensureRunning() {
    // Loading the class started it.
  }

  private void watch() {
    while (true) {
      try {
        Thread.sleep(PERIOD_MILLIS);
      } catch (InterruptedException e) {
        return;
      }
      pass();
    }
  }

  /**
   * One look: interrupts each sender stuck in {@code awaitWrite} once an event loop waits in {@code onClosed} or
   * {@code onFailure} in this pass and waited in the one before.
   *
   * @return how many threads it interrupted
   */
  int pass() {
    Thread[] live = threads.get();
    Set<Thread> waiting = new HashSet<>();
    boolean stuck = false;
    for (Thread thread : live) {
      if (eventLoop.test(thread) && isWaiting(thread)) {
        waiting.add(thread);
        if (waitingBefore.contains(thread)) {
          StackTraceElement[] stack = stacks.apply(thread);
          stuck |= contains(stack, "WatchEventsListener", "onClosed")
              || contains(stack, "WatchEventsListener", "onFailure");
        }
      }
    }
    waitingBefore = waiting;
    if (!stuck) {
      return 0;
    }
    int interrupted = 0;
    for (Thread thread : live) {
      if (isWaiting(thread) && contains(stacks.apply(thread), "VertxMockWebSocket", "awaitWrite")) {
        System.err.println("mock-server-watchdog: interrupting " + thread.getName()
            + ", stuck sending a watch event to a closing WebSocket");
        thread.interrupt();
        interrupted++;
      }
    }
    return interrupted;
  }

  /** Whether {@code thread} is a Vert.x event loop, by the name Vert.x gives it ({@code vert.x-eventloop-thread-N}). */
  static boolean isEventLoop(Thread thread) {
    return thread.getName().toLowerCase(Locale.ROOT).contains("eventloop");
  }

  private static boolean isWaiting(Thread thread) {
    Thread.State state = thread.getState();
    return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
  }

  private static boolean contains(StackTraceElement[] stack, String classSuffix, String method) {
    return Arrays.stream(stack).anyMatch(
        frame -> frame.getClassName().endsWith(classSuffix) && frame.getMethodName().equals(method));
  }

  /** The JVM's live threads, without a safepoint (unlike {@code Thread.getAllStackTraces()}). */
  private static Thread[] liveThreads() {
    ThreadGroup root = Thread.currentThread().getThreadGroup();
    while (root.getParent() != null) {
      root = root.getParent();
    }
    Thread[] found = new Thread[root.activeCount() + 16];
    int count;
    while ((count = root.enumerate(found, true)) == found.length) {
      found = new Thread[found.length * 2];
    }
    return Arrays.copyOf(found, count);
  }
}
