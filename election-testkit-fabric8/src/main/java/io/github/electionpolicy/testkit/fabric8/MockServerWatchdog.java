package io.github.electionpolicy.testkit.fabric8;

import java.util.Arrays;
import java.util.Map;

/**
 * Breaks a self-deadlock of fabric8's mock API server (mockwebserver 8.0.0). When a watch's WebSocket
 * closes while the server is sending it an event, the Vert.x event loop runs {@code
 * WatchEventsListener.onClosed} (or {@code onFailure}, when the connection drops abruptly), which waits
 * for the watch's sender thread, which waits (up to 30 s, in {@code VertxMockWebSocket.awaitWrite}) for a
 * write that only that blocked event loop can perform. The whole server then stalls, and every replica's
 * Lease calls time out, which has nothing to do with the behaviour under test. The watchdog interrupts the
 * waiting sender so the event loop goes on at once. One daemon thread per JVM, started by the first embedded
 * Lease API; it looks at thread stacks only, so it touches nothing else in the test's JVM.
 */
final class MockServerWatchdog {

  private static final long PERIOD_MILLIS = 50;

  static {
    Thread watchdog = new Thread(MockServerWatchdog::watch, "mock-server-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
  }

  private MockServerWatchdog() {}

  /** Starts the watchdog once per JVM. */
  static void ensureRunning() {
    // Loading the class started it.
  }

  private static void watch() {
    while (true) {
      try {
        Thread.sleep(PERIOD_MILLIS);
      } catch (InterruptedException e) {
        return;
      }
      Map<Thread, StackTraceElement[]> stacks = Thread.getAllStackTraces();
      boolean eventLoopWaitsForWatch = stacks.values().stream().anyMatch(
          stack -> contains(stack, "WatchEventsListener", "onClosed")
              || contains(stack, "WatchEventsListener", "onFailure"));
      if (eventLoopWaitsForWatch) {
        stacks.forEach((thread, stack) -> {
          if (contains(stack, "VertxMockWebSocket", "awaitWrite")) {
            System.err.println("mock-server-watchdog: interrupting " + thread.getName()
                + ", stuck sending a watch event to a closing WebSocket");
            thread.interrupt();
          }
        });
      }
    }
  }

  private static boolean contains(StackTraceElement[] stack, String classSuffix, String method) {
    return Arrays.stream(stack).anyMatch(
        frame -> frame.getClassName().endsWith(classSuffix) && frame.getMethodName().equals(method));
  }
}
