package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.extension.ExtendWith;
import org.pastalab.fray.junit.junit5.FrayTestExtension;
import org.pastalab.fray.junit.junit5.annotations.FrayTest;

/**
 * Controlled concurrency over the runner's public surface: the real {@link ElectionRunner} (its facade, driver,
 * lifecycle, elector, callback lanes and service sequence) on real threads, every interleaving of which is chosen
 * by Fray's scheduler (partial order sampling), where callers' threads meet the loop: {@code start()} racing
 * {@code close()}, {@code close()} from several threads and from a service's {@code stop()} while a loss is handled,
 * interrupted callers of {@code close()} and {@code awaitStopped()}, {@code health()} and {@code state()} read
 * meanwhile, and a {@code stop()} that hangs. No HTTP client takes part: the Lease calls go to an
 * {@link InMemoryLeaseTransport}, the loop and user code run on {@link ExploredThreads}, time moves only when a
 * scenario moves it.
 *
 * <p>Invariants, checked in every explored schedule: {@code close()} returns (a schedule in which it cannot is a
 * deadlock, which Fray reports), and returns only once the state is {@code STOPPED}; no service's {@code start()}
 * or {@code stop()} begins after a {@code close()} returned; at most one {@code stop()} per {@code start()}, and
 * none without one; {@code awaitStopped()} returns once {@code STOPPED}, after the listeners heard it; a reader who
 * sees {@code STOPPED} with cause {@code CLOSED}, a listener among them, sees {@code isClosed()} true; the final
 * state is {@code STOPPED} with the cause the scenario implies; no Lease call after the runner closed its
 * transport; an interrupted {@code close()} still waits and keeps the interrupt; nothing throws.
 *
 * <p>Runs in the Surefire execution {@code fray} (Fray's agent on an instrumented JDK 25); docs/reliability.md
 * records the numbers and the race it finds ({@link RunnerFlaw#CLOSED_FLAG_SET_AFTER_HANDOFF}, kept found by
 * {@link ReintroducedRaceExplorationTest}).
 */
@ExtendWith(FrayTestExtension.class)
class RunnerBoundaryExplorationTest {

  private static final ElectionDecision CONTEND = ElectionPolicy.defaults().decide(
      Environment.of(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "443")),
      Substrate.usingKubernetesApi("kubernetes"));
  private static final String IDENTITY = "replica-a";
  private static final Duration RETRY = Duration.ofSeconds(2);
  // Longer than the time the loss scenario moves on (6 retry periods), so that only the hung stop outlives it.
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);

  /**
   * Schedules explored per scenario. The classes are loaded once, not per iteration (a run builds everything it
   * uses afresh and leaves no thread behind): that makes an iteration about 10 ms instead of 300 ms.
   */
  static final int ITERATIONS = 1000;

  /**
   * The runner explored: the real one, unless {@code -Dexploration.runnerFlaw=NAME} names a {@link RunnerFlaw} to
   * show what the exploration finds ({@code CLOSED_FLAG_SET_AFTER_HANDOFF} fails the close races).
   */
  private static final RunnerFlaw FLAW = RunnerFlaw.valueOf(System.getProperty("exploration.runnerFlaw", "NONE"));

  /**
   * start() on the test's thread while two threads close, one awaits the stop and one reads health and state: the
   * close meets the runner anywhere from STARTING to LEADING with its service running.
   */
  @FrayTest(iterations = ITERATIONS, resetClassLoaderPerIteration = false)
  void startRacesTwoClosersAnAwaiterAndAReader() throws InterruptedException {
    raceClosers(FLAW).throwIfViolated();
  }

  /** start() on the test's thread while two threads close, one awaits the stop and one reads health and state. */
  static Run raceClosers(RunnerFlaw flaw) throws InterruptedException {
    try (Run run = new Run(flaw, LossPolicy.recontend())) {
      run.start();
      run.threads.caller("closer-1", run::closeAndCheck);
      run.threads.caller("closer-2", run::closeAndCheck);
      run.threads.caller("awaiter", run::awaitAndCheck);
      run.threads.caller("reader", () -> run.read(3));
      run.threads.joinCallers();
      run.expectStopped(ElectionState.StopCause.CLOSED);
      return run;
    }
  }

  /**
   * While STARTING (the RBAC preflight has not answered), one thread closes and the test's thread awaits the stop:
   * the shortest way to STOPPED, where the closed flag and the stop meet most closely.
   */
  @FrayTest(iterations = ITERATIONS, resetClassLoaderPerIteration = false)
  void closeWhileStartingAndAwait() throws InterruptedException {
    closeWhileStarting(FLAW).throwIfViolated();
  }

  static Run closeWhileStarting(RunnerFlaw flaw) throws InterruptedException {
    try (Run run = new Run(flaw, LossPolicy.recontend(), new InMemoryLeaseTransport(false))) {
      run.start();
      run.threads.caller("closer", run::closeAndCheck);
      run.awaitAndCheck();
      run.threads.joinCallers();
      run.expectStopped(ElectionState.StopCause.CLOSED);
      return run;
    }
  }

  /**
   * Leading, the Lease is taken by another replica and the loss path runs (loss policy RECONTEND); the service's
   * {@code stop()} closes the runner from inside, while another thread closes it too and a third awaits the stop.
   * The runner must stop for good (no second term), with cause CLOSED.
   */
  @FrayTest(iterations = ITERATIONS, resetClassLoaderPerIteration = false)
  void closeFromAServiceStopWhileTheLossPathRuns() throws InterruptedException {
    try (Run run = new Run(FLAW, LossPolicy.recontend())) {
      run.closeInStop = true;
      run.start();
      run.started.await();
      run.threads.caller("closer", run::closeAndCheck);
      run.threads.caller("awaiter", run::awaitAndCheck);
      run.transport.takenBy("replica-b", 60, Instant.EPOCH.plusSeconds(100));
      // Renewals conflict until the renew deadline passes: the loss.
      for (int i = 0; i < 6; i++) {
        run.threads.timers().advance(RETRY.toNanos());
      }
      run.threads.joinCallers();
      run.expectStopped(ElectionState.StopCause.CLOSED);
      if (run.starts.get() != 1) {
        run.violation("a new term started after close(): " + run.starts.get() + " starts");
      }
      run.throwIfViolated();
    }
  }

  /**
   * A thread blocked in {@code awaitStopped()} is interrupted; one calls {@code close()} with its interrupt flag
   * already set, another is interrupted while it waits in {@code close()}. Both closes must still wait for
   * {@code STOPPED} and return with the flag set; the awaiter returns at STOPPED or throws InterruptedException.
   */
  @FrayTest(iterations = ITERATIONS, resetClassLoaderPerIteration = false)
  void interruptedCallersOfCloseAndAwaitStopped() throws InterruptedException {
    try (Run run = new Run(FLAW, LossPolicy.recontend())) {
      run.start();
      run.started.await();
      Thread awaiter = run.threads.caller("awaiter", () -> {
        try {
          run.runner.get().awaitStopped();
          run.checkStoppedSeen("awaitStopped()");
        } catch (InterruptedException expected) {
          // Interrupted before the stop: what awaitStopped() promises.
        }
      });
      Thread closer = run.threads.caller("closer", () -> run.closeInterrupted(false));
      run.threads.caller("interrupted-closer", () -> run.closeInterrupted(true));
      run.threads.caller("interrupter", () -> {
        awaiter.interrupt();
        closer.interrupt();
      });
      run.threads.joinCallers();
      run.expectStopped(ElectionState.StopCause.CLOSED);
      run.throwIfViolated();
    }
  }

  /**
   * Leading, {@code close()} meets a service whose {@code stop()} hangs: close returns once the stop timeout
   * passed, STOPPED and closed, the Lease left to expire (not released: the old service may still run); an
   * awaiter returns too, and a reader reads health meanwhile.
   */
  @FrayTest(iterations = ITERATIONS, resetClassLoaderPerIteration = false)
  void closeWithAStopThatHangs() throws InterruptedException {
    try (Run run = new Run(FLAW, LossPolicy.recontend())) {
      run.hangInStop = true;
      run.start();
      run.started.await();
      run.threads.caller("closer", run::closeAndCheck);
      run.threads.caller("awaiter", run::awaitAndCheck);
      run.threads.caller("reader", () -> run.read(2));
      run.threads.caller("clock", () -> {
        try {
          run.stopEntered.await();
        } catch (InterruptedException e) {
          run.violation("clock interrupted");
          return;
        }
        run.threads.timers().advance(STOP_TIMEOUT.toNanos());
      });
      run.threads.joinCallers();
      run.expectStopped(ElectionState.StopCause.CLOSED);
      LeaseRecord lease = run.transport.lease();
      if (lease == null || !IDENTITY.equals(lease.holder())) {
        run.violation("a close whose stop hung released the Lease: " + lease);
      }
      run.hungStop.countDown();
      run.throwIfViolated();
    }
  }

  /** One explored run: a runner on explored threads, with a service and a listener that check what they see. */
  static final class Run implements AutoCloseable {
    final ExploredThreads threads = new ExploredThreads();
    final InMemoryLeaseTransport transport;
    final AtomicReference<ElectionRunner> runner = new AtomicReference<>();
    final AtomicInteger starts = new AtomicInteger();
    final AtomicInteger stops = new AtomicInteger();
    final AtomicInteger running = new AtomicInteger();
    final AtomicInteger stoppedHeard = new AtomicInteger();
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch stopEntered = new CountDownLatch(1);
    final CountDownLatch hungStop = new CountDownLatch(1);
    private final List<String> violations = new ArrayList<>();
    private final RunnerFlaw flaw;
    private final LossPolicy policy;
    volatile boolean closeReturned;
    boolean closeInStop;
    boolean hangInStop;

    Run(RunnerFlaw flaw, LossPolicy policy) {
      this(flaw, policy, new InMemoryLeaseTransport());
    }

    Run(RunnerFlaw flaw, LossPolicy policy, InMemoryLeaseTransport transport) {
      this.flaw = flaw;
      this.policy = policy;
      this.transport = transport;
    }

    ElectionRunner start() {
      LeaseSettings settings = LeaseSettings.builder()
          .leaseName("explored")
          .namespace("default")
          .identity(IDENTITY)
          .leaseDuration(Duration.ofSeconds(15))
          .renewDeadline(Duration.ofSeconds(10))
          .retryPeriod(RETRY)
          .stopTimeout(STOP_TIMEOUT)
          .lossPolicy(policy)
          .build();
      ElectionRunner started = ElectionRunner.builder()
          .decision(CONTEND)
          .settings(settings)
          .transport(transport)
          .loop(threads.loop())
          .userCode(threads.userCode())
          .ticker(threads.ticker())
          .clock(java.time.Clock.fixed(Instant.EPOCH.plusSeconds(100), java.time.ZoneOffset.UTC))
          .runnerFlaw(flaw)
          .service(new Service())
          .listener(new Listener())
          .start();
      runner.set(started);
      return started;
    }

    synchronized void violation(String what) {
      violations.add(what + " [" + Thread.currentThread().getName() + "]");
    }

    synchronized List<String> violations() {
      return List.copyOf(violations);
    }

    void throwIfViolated() {
      List<String> found = violations();
      if (!found.isEmpty()) {
        throw new AssertionError("invariants broken: " + found);
      }
    }

    void closeAndCheck() {
      try {
        runner.get().close();
        checkStoppedSeen("close()");
        closeReturned = true;
      } catch (Throwable e) {
        violation("close() threw " + e);
      }
    }

    void closeInterrupted(boolean flagSetBefore) {
      if (flagSetBefore) {
        Thread.currentThread().interrupt();
      }
      try {
        runner.get().close();
        checkStoppedSeen("an interrupted close()");
        closeReturned = true;
      } catch (Throwable e) {
        violation("close() threw " + e);
      }
      if (flagSetBefore && !Thread.interrupted()) {
        violation("close() cleared the caller's interrupt flag");
      }
    }

    void awaitAndCheck() {
      try {
        runner.get().awaitStopped();
        checkStoppedSeen("awaitStopped()");
        if (stoppedHeard.get() == 0) {
          violation("awaitStopped() returned before the listeners heard STOPPED");
        }
      } catch (Throwable e) {
        violation("awaitStopped() threw " + e);
      }
    }

    void checkStoppedSeen(String call) {
      ElectionRunner r = runner.get();
      ElectionState state = r.state();
      if (!(state instanceof ElectionState.Stopped)) {
        violation(call + " returned in state " + state);
      }
      checkClosedFlag(state);
    }

    /** A reader on another thread: health and state, a few times over, each consistent with the closed flag. */
    void read(int times) {
      try {
        for (int i = 0; i < times; i++) {
          ElectionRunner r = runner.get();
          ElectionHealth health = r.health();
          if (health.state() instanceof ElectionState.Stopped && health.ready()) {
            violation("health() ready while STOPPED: " + health);
          }
          checkClosedFlag(r.state());
        }
      } catch (Throwable e) {
        violation("a reader threw " + e);
      }
    }

    private void checkClosedFlag(ElectionState state) {
      if (state instanceof ElectionState.Stopped stopped && stopped.cause() == ElectionState.StopCause.CLOSED
          && !runner.get().isClosed()) {
        violation("STOPPED(CLOSED) seen while isClosed() is false");
      }
    }

    void expectStopped(ElectionState.StopCause cause) {
      ElectionRunner r = runner.get();
      ElectionState state = r.state();
      if (!(state instanceof ElectionState.Stopped stopped) || stopped.cause() != cause) {
        violation("final state " + state + ", expected STOPPED(" + cause + ")");
      }
      if (!r.isClosed()) {
        violation("closed, yet isClosed() is false");
      }
      if (transport.callsAfterClose() > 0) {
        violation(transport.callsAfterClose() + " Lease calls after the transport was closed");
      }
      if (!hangInStop && (stops.get() != starts.get() || running.get() != 0)) {
        violation(starts.get() + " starts, " + stops.get() + " stops at STOPPED");
      }
    }

    @Override
    public void close() throws InterruptedException {
      hungStop.countDown();
      ElectionRunner r = runner.get();
      if (r != null) {
        RunnerHooks.closeAsync(r);
      }
      threads.close();
    }

    private final class Service implements LeaderService {
      @Override
      public void start(LeadershipTerm term) {
        if (closeReturned) {
          violation("start() after close() returned");
        }
        if (running.incrementAndGet() != 1) {
          violation("start() while the service runs");
        }
        starts.incrementAndGet();
        started.countDown();
      }

      @Override
      public void stop() throws InterruptedException {
        if (closeReturned) {
          violation("stop() after close() returned");
        }
        if (running.decrementAndGet() != 0) {
          violation("stop() without a start()");
        }
        stops.incrementAndGet();
        stopEntered.countDown();
        if (closeInStop) {
          runner.get().close(); // from inside a callback: returns at once
        }
        if (hangInStop) {
          hungStop.await();
        }
      }
    }

    private final class Listener implements ElectionListener {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current instanceof ElectionState.Stopped) {
          stoppedHeard.incrementAndGet();
          if (runner.get() != null) {
            checkClosedFlag(current);
          }
        }
      }
    }
  }
}
