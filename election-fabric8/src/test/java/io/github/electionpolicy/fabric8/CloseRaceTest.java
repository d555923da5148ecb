package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A {@code close()} that races a failure or the preflight's denial: the loop's order decides which one the runner
 * ends on, and {@code close()} never triggers the loss policy. (From the adversarial reviews of the runner: the
 * rewrite onto RunnerLifecycle, commit 0201dfc, and the start-up changes before it.)
 */
class CloseRaceTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  /**
   * FINDING 7. close() marks the runner closed (isClosed() true, the term ended) on the caller's thread, but the
   * lifecycle learns of it only when its CloseRequested task runs on the loop. A failure of the election logic
   * (or a loss) whose task is already queued on the loop is taken as happening before the close: a follower (no
   * service to stop) then applies the loss policy at once, and under EXIT the exiter runs although close() was
   * called first: close() triggered the loss policy. Made deterministic by holding the shared loop while a bad
   * answer to the follower's read, then the close, are queued.
   */
  @Test
  void aFailureQueuedBeforeTheCloseIsTakenNeverExitsAClosedRunner() throws Exception {
    Replica x = Replica.startLeader("x", api.client(), MockApi.fastSettings("x").build(), log);
    List<Integer> exits = new CopyOnWriteArrayList<>();
    java.util.concurrent.atomic.AtomicReference<LeaseTransport.Answered> heldRead =
        new java.util.concurrent.atomic.AtomicReference<>();
    AtomicBoolean holdReads = new AtomicBoolean();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.exit(exits::add)).build();
    LeaseTransport holding = new ForwardingTransport(new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
        settings, SharedPools.io())) {
      @Override
      public Call read(Answered done) {
        if (holdReads.get() && heldRead.compareAndSet(null, done)) {
          return () -> { };
        }
        return super.read(done);
      }
    };
    CloserWatchingLoop loop = new CloserWatchingLoop();
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .transport(holding)
        .loop(loop)
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(log.service("a"))
        .start();
    CountDownLatch loopHeld = new CountDownLatch(1);
    CountDownLatch releaseLoop = new CountDownLatch(1);
    try {
      assertThat(Replica.awaitTrue(() -> a.state().equals(new ElectionState.Following(Optional.of("x"))),
          Duration.ofSeconds(5))).isTrue();
      holdReads.set(true);
      assertThat(Replica.awaitTrue(() -> heldRead.get() != null, Duration.ofSeconds(5))).as("a read held").isTrue();
      RunnerLoop.shared().execute(() -> {
        loopHeld.countDown();
        try {
          releaseLoop.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      assertThat(loopHeld.await(5, TimeUnit.SECONDS)).isTrue();
      // A bad answer (a bug of the transport): the protocol throws on it, on the loop, as ELECTION_FAILED.
      heldRead.get().answered(new LeaseStep.Answer.Written(
          new LeaseRecord("x", 2, java.time.Instant.now(), java.time.Instant.now(), 0, "99")), null);
      Thread closing = new Thread(a::close, CloserWatchingLoop.CLOSER);
      closing.start();
      assertThat(loop.closeQueued.await(5, TimeUnit.SECONDS)).as("close() queued its input").isTrue();
      assertThat(a.isClosed()).isTrue();
      releaseLoop.countDown();

      closing.join(10_000);
      assertThat(closing.isAlive()).as("close() returned").isFalse();
      assertThat(a.awaitStopped(Duration.ofSeconds(5))).isTrue();
      assertThat(exits).as("the exiter of a runner close() was called on; state %s", a.state()).isEmpty();
    } finally {
      releaseLoop.countDown();
      a.close();
      x.close();
    }
  }

  // ---- finding 8 of the review of the start-up, settings and health changes --------------------------

  /**
   * Attack (finding 8 of the old runner): close() "never triggers the loss policy", yet a close() that began
   * while the preflight's denial was being acted on still got the EXIT. With one loop owning the state, the
   * loop's order decides: a close() taken in before the denial stops the runner as CLOSED, with no exit and no
   * startup failure, whatever the denial says once it arrives (here it is held back until close() returned).
   */
  @Test
  void aCloseTakenInBeforeTheDenialIsNotAnExit() throws Exception {
    api.denying(Set.of("update"));
    List<Integer> exits = new CopyOnWriteArrayList<>();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.exit(exits::add)).build();
    CountDownLatch denialHeld = new CountDownLatch(1);
    AtomicReference<Runnable> deliver = new AtomicReference<>();
    LeaseTransport holdingTheDenial = new ForwardingTransport(new Fabric8LeaseTransport(api.client(),
        MockApi.NAMESPACE, settings, SharedPools.io())) {
      @Override
      public Call preflight(java.util.function.Consumer<java.util.Optional<LeaseAccessDeniedException>> done,
          java.util.function.Consumer<Throwable> failed) {
        return super.preflight(denied -> {
          deliver.set(() -> done.accept(denied));
          denialHeld.countDown();
        }, failed);
      }
    };
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .transport(holdingTheDenial)
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(log.service("a"))
        .start();
    assertThat(denialHeld.await(5, TimeUnit.SECONDS)).isTrue();

    a.close();
    deliver.get().run();

    assertThat(a.awaitStopped(Duration.ofSeconds(5))).isTrue();
    assertThat(exits).as("closing is not a loss").isEmpty();
    assertThat(a.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
    assertThat(a.startupFailure()).as("the close, not the denial, stopped the runner").isEmpty();
  }

  /**
   * The other order of the same race: the loop took the denial in first (its ERROR line is being written, stalled
   * here as a blocked stderr pipe would stall it, on the runner's log lane) when another thread calls close().
   * The exit was decided before the close: it happens once, the runner stops as ACCESS_DENIED, and the close() returns.
   */
  @Test
  void aCloseThatArrivesAfterTheDenialWasTakenInEndsTheRunnerAsDenied() throws Exception {
    api.denying(Set.of("update"));
    List<Integer> exits = new CopyOnWriteArrayList<>();
    AtomicReference<ElectionRunner> runner = new AtomicReference<>();
    CountDownLatch runnerKnown = new CountDownLatch(1);
    AtomicBoolean closeStarted = new AtomicBoolean();
    List<Thread> closers = new CopyOnWriteArrayList<>();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.exit(exits::add)).build();
    CloserWatchingLoop loop = new CloserWatchingLoop();

    PrintStream original = System.err;
    StallingErr stalling = new StallingErr(original, "Not contending for Lease", () -> {
      // On the log lane, inside the ERROR line's write: the runner is closed from elsewhere meanwhile.
      if (closeStarted.compareAndSet(false, true)) {
        try {
          runnerKnown.await(5, TimeUnit.SECONDS);
          Thread closer = new Thread(runner.get()::close, CloserWatchingLoop.CLOSER);
          closers.add(closer);
          closer.start();
          // close() has asked once its input is queued; it waits behind the one being handled.
          assertThat(loop.closeQueued.await(5, TimeUnit.SECONDS)).as("close() queued its input").isTrue();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return null;
    });
    System.setErr(new PrintStream(stalling, true, StandardCharsets.UTF_8));
    try {
      ElectionRunner a = ElectionRunner.builder()
          .client(api.client())
          .loop(loop)
          .decision(MockApi.CONTEND)
          .settings(settings)
          .service(log.service("a"))
          .start();
      runner.set(a);
      runnerKnown.countDown();
      assertThat(a.awaitStopped(Duration.ofSeconds(10))).isTrue();
      for (Thread closer : closers) {
        closer.join(10_000);
        assertThat(closer.isAlive()).as("close() returned").isFalse();
      }

      assertThat(closeStarted).as("the stall ran").isTrue();
      // The close stopped the runner while the exiter was on its way: it does not wait for an exiter, which may be
      // System.exit() running the very hook that closes.
      assertThat(Replica.awaitTrue(() -> !exits.isEmpty(), Duration.ofSeconds(5))).isTrue();
      assertThat(exits).as("decided before the close came").containsExactly(LossPolicy.LOSS_EXIT_STATUS);
      assertThat(a.isClosed()).isTrue();
      assertThat(a.startupFailure()).isPresent();
    } finally {
      System.setErr(original);
    }
  }

  /** A System.err that runs {@code onMatch} on the writing thread when a write contains {@code marker}. */
  private static final class StallingErr extends OutputStream {
    private final PrintStream original;
    private final String marker;
    private final Supplier<Void> onMatch;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();

    StallingErr(PrintStream original, String marker, Supplier<Void> onMatch) {
      this.original = original;
      this.marker = marker;
      this.onMatch = onMatch;
    }

    @Override
    public void write(int b) {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      original.write(b, off, len);
      boolean matched;
      synchronized (line) {
        line.write(b, off, len);
        matched = line.toString(StandardCharsets.UTF_8).contains(marker);
        if (matched || line.size() > 100_000) {
          line.reset();
        }
      }
      if (matched) {
        onMatch.get();
      }
    }
  }

  /**
   * The shared loop, which notes when a task is queued from a thread named {@link #CLOSER}: that task is the
   * close()'s input, so a test knows close() has asked without sleeping.
   */
  private static final class CloserWatchingLoop implements RunnerLoop {
    static final String CLOSER = "closer";
    final CountDownLatch closeQueued = new CountDownLatch(1);
    private final RunnerLoop shared = RunnerLoop.shared();

    @Override
    public void execute(Runnable task) {
      shared.execute(task);
      if (Thread.currentThread().getName().equals(CLOSER)) {
        closeQueued.countDown();
      }
    }

    @Override
    public Timer schedule(long delayNanos, Runnable task) {
      return shared.schedule(delayNanos, task);
    }

    @Override
    public boolean inLoop() {
      return shared.inLoop();
    }
  }
}
