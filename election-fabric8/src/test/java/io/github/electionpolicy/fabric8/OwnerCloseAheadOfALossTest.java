package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.PriorityQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The owner's close (a sharded replica's coordinator's closeShard, {@code requestClose(true)}) is taken in ahead of
 * queued inputs, except ahead of a loss: a loss queued before it keeps its policy, to which the owner's close yields.
 * The same schedule, run twice on a deterministic loop and ticker, one task at a time: the answer that tells the leader
 * its term is lost is already queued on the loop when the owner's close is handed off, and the close's own task comes
 * after it. A loss at the renew deadline comes as {@code Lost} alone; a loss by a foreign write (a Lease taken or
 * deleted) as {@code Followed(holder)} just before {@code Lost}, fed together. Both keep their policy: the handler is
 * asked and its {@code STOP} ends the runner {@code LOST}.
 *
 * <p>Finding h-attack3-1: the close was stepped ahead of the {@code Followed}, so the runner closed while still
 * {@code Leading}, its {@code Lost} was dropped, the handler never asked, and it ended {@code CLOSED}; for a sharded
 * replica, which takes {@code CLOSED} for "the replica closed this runner", a handler's {@code STOP} (or {@code EXIT})
 * was lost and the replica joined again (the class of {@code SimulationShardingStopDuringMembershipLoss}'s seed 1015).
 */
class OwnerCloseAheadOfALossTest {

  /** Control: a renew-deadline loss queued ahead of the owner's close keeps its policy (green). */
  @Test
  void aRenewDeadlineLossQueuedAheadOfTheOwnersCloseKeepsItsPolicy() {
    Outcome outcome = run(false);
    assertThat(outcome.handlerCalls).as("loss handler calls").isEqualTo(1);
    assertThat(outcome.cause).as("stop cause").isEqualTo(ElectionState.StopCause.LOST);
  }

  /**
   * The same schedule, the loss by a foreign write: it keeps its policy too (before the fix the owner's close went
   * ahead of the {@code Followed}, the policy was skipped and the runner ended CLOSED).
   */
  @Test
  void aForeignWriteLossQueuedAheadOfTheOwnersCloseKeepsItsPolicy() {
    Outcome outcome = run(true);
    assertThat(outcome.handlerCalls).as("loss handler calls").isEqualTo(1);
    assertThat(outcome.cause).as("stop cause").isEqualTo(ElectionState.StopCause.LOST);
  }

  private record Outcome(int handlerCalls, ElectionState.StopCause cause) {}

  private static Outcome run(boolean foreignWrite) {
    ManualLoop loop = new ManualLoop();
    InMemoryLeaseTransport server = new InMemoryLeaseTransport();
    AtomicBoolean armed = new AtomicBoolean();
    AtomicBoolean lossAnswerQueued = new AtomicBoolean();
    LeaseTransport transport = new ForwardingTransport(server) {
      @Override
      public Call update(LeaseRecord record, Answered done) {
        if (!armed.get()) {
          return super.update(record, done);
        }
        if (foreignWrite) {
          // Another process wrote the Lease just before this renewal: it conflicts, and the read after it finds the
          // new holder. Both answers come back as loop tasks (InMemoryLeaseTransport answers on the calling thread).
          armed.set(false);
          server.takenBy("thief", 15, Instant.now());
          return super.update(record, done);
        }
        return () -> { }; // never answered: the renew deadline passes
      }

      @Override
      public Call read(Answered done) {
        if (foreignWrite && !armed.get() && !lossAnswerQueued.get() && server.lease() != null
            && "thief".equals(server.lease().holder())) {
          lossAnswerQueued.set(true);
        }
        return super.read(done);
      }
    };
    AtomicInteger handlerCalls = new AtomicInteger();
    LeaseSettings settings = MockApi.fastSettings("a")
        .lossPolicy(LossPolicy.custom(term -> {
          handlerCalls.incrementAndGet();
          return LossHandler.AfterLoss.STOP;
        }))
        .build();
    ElectionRunner runner = ElectionRunner.builder()
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(LeaderService.of(term -> { }, () -> { }))
        .rbacPreflight(false)
        .transport(transport)
        .loop(loop)
        .ticker(loop)
        .userCode(Runnable::run)
        .start();
    long step = Duration.ofMillis(10).toNanos();
    for (int i = 0; i < 100 && runner.state().kind() != ElectionState.Kind.LEADING; i++) {
      loop.advance(step);
      loop.runAll();
    }
    assertThat(runner.state().kind()).as("leading").isEqualTo(ElectionState.Kind.LEADING);
    loop.runAll();
    LeadershipTerm term = runner.currentTerm().orElseThrow();
    armed.set(true);
    if (foreignWrite) {
      // Until the renewal went out and its conflict's re-read was answered: that answer (the Lease held by "thief")
      // is then the last task queued, not yet run.
      for (int i = 0; i < 100 && !lossAnswerQueued.get(); i++) {
        loop.advance(step);
        loop.runOneAtATimeUntil(lossAnswerQueued::get);
      }
      assertThat(lossAnswerQueued).as("the answer that shows the Lease taken is queued").isTrue();
    } else {
      // The renewals go unanswered; every task runs until just before the renew deadline, whose timer is then queued.
      long deadline = -1;
      for (int i = 0; i < 5000; i++) {
        long before = loop.now;
        loop.advance(Duration.ofMillis(1).toNanos());
        if (!term.isValid()) {
          deadline = before;
          break;
        }
        loop.runAll();
      }
      assertThat(deadline).as("the renew deadline came").isPositive();
    }
    assertThat(runner.state().kind()).as("the loss is queued, not yet taken in").isEqualTo(ElectionState.Kind.LEADING);
    LifecycleDriver driver = runner.driverForTest();
    driver.requestClose(true); // a coordinator's closeShard: handed off behind the queued loss
    for (int i = 0; i < 1000 && !driver.hasStopped(); i++) {
      loop.runAll();
      loop.advance(step);
    }
    ElectionState state = runner.state();
    assertThat(state).as("stopped").isInstanceOf(ElectionState.Stopped.class);
    return new Outcome(handlerCalls.get(), ((ElectionState.Stopped) state).cause());
  }

  /** A loop and ticker moved by the test alone: tasks run on the test's thread, timers when the test moves time. */
  static final class ManualLoop implements RunnerLoop, Ticker {
    private record Timed(long at, long seq, Runnable task, AtomicBoolean cancelled) {}

    long now = 1_000_000_000L;
    private long seq;
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    private final PriorityQueue<Timed> timers = new PriorityQueue<>(
        (a, b) -> a.at() != b.at() ? Long.compare(a.at(), b.at()) : Long.compare(a.seq(), b.seq()));
    private volatile Thread running;

    @Override
    public synchronized void execute(Runnable task) {
      tasks.add(task);
    }

    @Override
    public synchronized Timer schedule(long delayNanos, Runnable task) {
      Timed timed = new Timed(now + Math.max(0, delayNanos), seq++, task, new AtomicBoolean());
      timers.add(timed);
      return () -> timed.cancelled().set(true);
    }

    @Override
    public boolean inLoop() {
      return running == Thread.currentThread();
    }

    @Override
    public synchronized long read() {
      return now;
    }

    /** Moves time on; timers now due are queued behind the tasks queued so far, in their order. */
    synchronized void advance(long nanos) {
      now += nanos;
      while (!timers.isEmpty() && timers.peek().at() - now <= 0) {
        Timed timed = timers.poll();
        if (!timed.cancelled().get()) {
          tasks.add(timed.task());
        }
      }
    }

    synchronized int queuedCount() {
      return tasks.size();
    }

    private synchronized Runnable poll() {
      return tasks.poll();
    }

    void runAll() {
      runOneAtATimeUntil(() -> false);
    }

    /** Runs queued tasks, one at a time, until none is left or {@code stop} holds after a task. */
    void runOneAtATimeUntil(java.util.function.BooleanSupplier stop) {
      running = Thread.currentThread();
      try {
        Runnable task;
        while (!stop.getAsBoolean() && (task = poll()) != null) {
          task.run();
        }
      } finally {
        running = null;
      }
    }
  }
}
