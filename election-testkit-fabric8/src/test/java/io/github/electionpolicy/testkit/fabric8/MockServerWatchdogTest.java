package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The mock server's watchdog, pass by pass: it breaks the stall it is for, and reads no thread's stack (which stops the
 * whole JVM at a safepoint) while no event loop has waited for two passes in a row. The stall is staged by threads
 * whose stacks have the mock server's shape: the test's own classes named {@code WatchEventsListener} and
 * {@code VertxMockWebSocket}, with the methods the watchdog looks for. The staged event loops have names the JVM's own
 * watchdog does not take for Vert.x's, so that it leaves them to the watchdog under test.
 */
class MockServerWatchdogTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.of(LeaseApi.builder().target(ApiServerTarget.embedded()));

  private final List<Thread> started = new ArrayList<>();
  private final CountDownLatch end = new CountDownLatch(1);
  private final AtomicInteger stackReads = new AtomicInteger();
  private final Function<Thread, StackTraceElement[]> countedStacks = thread -> {
    stackReads.incrementAndGet();
    return thread.getStackTrace();
  };

  @AfterEach
  void endThreads() throws InterruptedException {
    end.countDown();
    for (Thread thread : started) {
      thread.interrupt();
      thread.join(TimeUnit.SECONDS.toMillis(10));
    }
  }

  @Test
  void aSenderStuckWhileTheEventLoopWaitsInOnClosedIsInterruptedAtTheSecondPass() {
    AtomicBoolean senderInterrupted = new AtomicBoolean();
    Thread eventLoop = waiting("staged-event-loop-7", () -> WatchEventsListener.onClosed(end));
    Thread sender = waiting("pool-3-thread-1", () -> senderInterrupted.set(VertxMockWebSocket.awaitWrite()));
    MockServerWatchdog watchdog = new MockServerWatchdog(() -> new Thread[] {eventLoop, sender}, eventLoop::equals,
        countedStacks);

    assertThat(watchdog.pass()).as("first pass: the event loop may wait for a moment").isZero();
    assertThat(stackReads).as("no stack read on a first sighting").hasValue(0);
    assertThat(watchdog.pass()).as("second pass: it still waits, in onClosed").isEqualTo(1);
    Await.until("the sender saw its interrupt", senderInterrupted::get);
  }

  @Test
  void anEventLoopWaitingInOnFailureCountsAsStuckToo() {
    AtomicBoolean senderInterrupted = new AtomicBoolean();
    Thread eventLoop = waiting("staged-event-loop-2", () -> WatchEventsListener.onFailure(end));
    Thread sender = waiting("pool-4-thread-1", () -> senderInterrupted.set(VertxMockWebSocket.awaitWrite()));
    MockServerWatchdog watchdog = new MockServerWatchdog(() -> new Thread[] {eventLoop, sender}, eventLoop::equals,
        countedStacks);

    watchdog.pass();
    assertThat(watchdog.pass()).isEqualTo(1);
    Await.until("the sender saw its interrupt", senderInterrupted::get);
  }

  @Test
  void noStackIsReadWhileNoEventLoopWaitsTwoPassesInARow() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      // An event loop in I/O (RUNNABLE, as one in epoll is), a pool thread idling, and a sender in awaitWrite that
      // no event loop waits for.
      Thread busyLoop = start("staged-event-loop-0", () -> accept(socket));
      Thread idle = waiting("pool-1-thread-1", () -> await(end));
      Thread sender = waiting("pool-2-thread-1", VertxMockWebSocket::awaitWrite);
      Await.until("the event loop sits in accept", () -> busyLoop.getState() == Thread.State.RUNNABLE
          && stackOf(busyLoop).contains("accept"));
      stackReads.set(0);
      MockServerWatchdog watchdog = new MockServerWatchdog(() -> new Thread[] {busyLoop, idle, sender},
          busyLoop::equals, countedStacks);

      for (int pass = 0; pass < 20; pass++) {
        assertThat(watchdog.pass()).isZero();
      }
      assertThat(stackReads).as("stacks read in 20 passes").hasValue(0);
      assertThat(sender.isInterrupted()).isFalse();
    }
  }

  @Test
  void anEventLoopWaitingElsewhereHasItsOwnStackReadAndNoOneInterrupted() {
    Thread eventLoop = waiting("staged-event-loop-5", () -> await(end));
    Thread sender = waiting("pool-5-thread-1", VertxMockWebSocket::awaitWrite);
    MockServerWatchdog watchdog = new MockServerWatchdog(() -> new Thread[] {eventLoop, sender}, eventLoop::equals,
        countedStacks);

    assertThat(watchdog.pass()).isZero();
    assertThat(watchdog.pass()).isZero();
    assertThat(watchdog.pass()).isZero();
    assertThat(stackReads).as("the waiting event loop's stack, in the second and third passes").hasValue(2);
    assertThat(sender.isInterrupted()).isFalse();
  }

  @Test
  void theEmbeddedMockServersEventLoopThreadsAreTheOnesItWatches() {
    api.client().leases().inNamespace(api.namespace()).list(); // the fixture's client is the JDK's: no Vert.x of its own
    assertThat(Thread.getAllStackTraces().keySet()).as("live threads")
        .anyMatch(thread -> thread.getName().startsWith("vert.x-eventloop-thread-"))
        .anyMatch(MockServerWatchdog::isEventLoop);
    assertThat(MockServerWatchdog.isEventLoop(new Thread("vert.x-eventloop-thread-3"))).isTrue();
    assertThat(MockServerWatchdog.isEventLoop(new Thread("pool-1-thread-1"))).isFalse();
    assertThat(MockServerWatchdog.isEventLoop(new Thread("staged-event-loop-1"))).as("the staged ones here").isFalse();
  }

  /** Starts a thread and returns once it waits in {@code body}. */
  private Thread waiting(String name, Runnable body) {
    Thread thread = start(name, body);
    Await.until(name + " waits in its body", () -> (thread.getState() == Thread.State.TIMED_WAITING
        || thread.getState() == Thread.State.WAITING)
        && stackOf(thread).contains(MockServerWatchdogTest.class.getName()));
    return thread;
  }

  private Thread start(String name, Runnable body) {
    Thread thread = new Thread(body, name);
    thread.setDaemon(true);
    thread.start();
    started.add(thread);
    return thread;
  }

  private static String stackOf(Thread thread) {
    StringBuilder text = new StringBuilder();
    for (StackTraceElement frame : thread.getStackTrace()) {
      text.append(frame.getClassName()).append('.').append(frame.getMethodName()).append('\n');
    }
    return text.toString();
  }

  private static void accept(ServerSocket socket) {
    try {
      socket.accept().close();
    } catch (IOException e) {
      // closed at the test's end
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Shaped as the mock server's listener: its event loop waits in these for the watch's sender. */
  static final class WatchEventsListener {
    static void onClosed(CountDownLatch end) {
      await(end);
    }

    static void onFailure(CountDownLatch end) {
      await(end);
    }
  }

  /** Shaped as the mock server's WebSocket: its sender waits here for a write only the event loop can do. */
  static final class VertxMockWebSocket {
    /** Returns whether the wait ended by an interrupt. */
    static boolean awaitWrite() {
      try {
        new CompletableFuture<Void>().get(30, TimeUnit.SECONDS);
        return false;
      } catch (InterruptedException e) {
        return true;
      } catch (java.util.concurrent.ExecutionException | TimeoutException e) {
        return false;
      }
    }
  }
}
