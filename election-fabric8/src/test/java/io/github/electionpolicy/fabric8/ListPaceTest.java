package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The pace of an informer's lists ({@link ListPace}), on a ticker and a loop of the test's own: which list waits and
 * how long, and that a list held when the client closes is never sent nor answered.
 */
class ListPaceTest {

  private static final long MS = 1_000_000L;

  private final AtomicLong now = new AtomicLong(1_000 * MS);
  private final List<Runnable> due = new ArrayList<>();
  private final AtomicInteger cancelled = new AtomicInteger();
  private final RunnerLoop loop = new RunnerLoop() {
    @Override
    public void execute(Runnable task) {
      task.run();
    }

    @Override
    public Timer schedule(long delayNanos, Runnable task) {
      due.add(task);
      return () -> {
        if (due.remove(task)) {
          cancelled.incrementAndGet();
        }
      };
    }

    @Override
    public boolean inLoop() {
      return true;
    }
  };
  private final ListPace pace = new ListPace(10 * MS, 320 * MS, now::get, loop, Runnable::run);

  @Test
  void listsThatFollowEachOtherAtOnceAreHeldFromTheFirstIntervalDoublingToTheCapAndALaterOneGoesAtOnce() {
    List<Long> delays = new ArrayList<>();
    delays.add(pace.admit(now.get()));
    for (int i = 0; i < 8; i++) {
      now.addAndGet(MS + delays.get(delays.size() - 1)); // each list 1 ms after the one before went out
      delays.add(pace.admit(now.get()));
    }
    assertThat(delays).containsExactly(0L, 9 * MS, 19 * MS, 39 * MS, 79 * MS, 159 * MS, 319 * MS, 319 * MS, 319 * MS);

    now.addAndGet(delays.get(delays.size() - 1) + 640 * MS); // its watch lasted twice the cap after it went out
    assertThat(pace.admit(now.get())).as("after a list and watch that lasted").isZero();
    now.addAndGet(MS);
    assertThat(pace.admit(now.get())).as("the pace starts again").isEqualTo(9 * MS);
  }

  @Test
  void listsThatFailInARowAfterFabric8sOwnBackoffAreNotHeld() {
    long backoff = 10 * MS;
    assertThat(pace.admit(now.get())).isZero();
    for (int i = 0; i < 6; i++) {
      now.addAndGet(backoff); // failed at once, then fabric8 waited its back-off
      assertThat(pace.admit(now.get())).as("list %d", i + 2).isZero();
      backoff = Math.min(320 * MS, backoff * 2);
    }
  }

  @Test
  void aListHeldWhenTheClientClosesIsNeverSentNorAnsweredAndItsTimerIsCancelled() {
    AtomicInteger sent = new AtomicInteger();
    CompletableFuture<String> first = pace.send(() -> {
      sent.incrementAndGet();
      return CompletableFuture.completedFuture("listed");
    });
    assertThat(first).isCompletedWithValue("listed");
    CompletableFuture<String> held = pace.send(() -> {
      sent.incrementAndGet();
      return CompletableFuture.completedFuture("listed");
    });
    assertThat(held).isNotDone();
    assertThat(due).hasSize(1);

    pace.close();
    assertThat(cancelled).hasValue(1);
    assertThat(due).isEmpty();
    assertThat(held).as("no answer, no failure: the stopped informer would log one at ERROR").isNotDone();
    assertThat(sent).hasValue(1);
  }

  @Test
  void aHeldListIsSentOnceItsTimeCameAndAnsweredWithItsAnswer() {
    pace.send(() -> CompletableFuture.completedFuture("first"));
    CompletableFuture<String> answer = new CompletableFuture<>();
    CompletableFuture<String> held = pace.send(() -> answer);
    assertThat(due).hasSize(1);
    due.remove(0).run();
    assertThat(held).isNotDone();
    answer.complete("second");
    assertThat(held).isCompletedWithValue("second");
  }

  /**
   * A relist after failures (ShardLeaseSource#relist) restarts the pace: its list goes out at once, not at the pace
   * the lists before it built up (which would be the back-off's next try the relist cuts short), and a list the
   * replaced informer still had held is dropped with its timer.
   */
  @Test
  void aRestartSendsTheNextListAtOnceAndDropsTheHeldOnes() {
    for (int i = 0; i < 7; i++) {
      pace.admit(now.get()); // lists in a row: the pace reaches the cap
      now.addAndGet(MS);
    }
    CompletableFuture<String> held = pace.send(() -> CompletableFuture.completedFuture("old informer's"));
    assertThat(held).isNotDone();
    assertThat(due).hasSize(1);

    pace.restart();
    assertThat(cancelled).hasValue(1);
    assertThat(due).isEmpty();
    assertThat(held).isNotDone();
    now.addAndGet(MS);
    assertThat(pace.send(() -> CompletableFuture.completedFuture("relist's")))
        .as("the relist's list, at once").isCompletedWithValue("relist's");
    now.addAndGet(MS);
    assertThat(pace.admit(now.get())).as("then the pace again, from its first interval").isEqualTo(9 * MS);
  }
  /**
   * Finding h-attack15 (2): a held list whose time came just before the close (or a relist's restart) is on its way
   * to a worker, off the held ones that the close drops; the worker then sent it anyway, through a client that was
   * closed meanwhile, whose refusal answered it with a failure: the answer the close is meant never to give (the
   * stopped informer logs it at ERROR), or, after a restart, a list of the replaced informer sent after the relist's.
   * Whatever the close or the restart finds on its way to a worker is dropped as a held list is.
   */
  @Test
  void aHeldListOnItsWayToAWorkerWhenTheClientClosesOrThePaceRestartsIsNeitherSentNorAnswered() {
    List<Runnable> workers = new ArrayList<>();
    ListPace queued = new ListPace(10 * MS, 320 * MS, now::get, loop, workers::add);
    java.util.concurrent.atomic.AtomicBoolean clientClosed = new java.util.concurrent.atomic.AtomicBoolean();
    AtomicInteger sent = new AtomicInteger();
    java.util.function.Supplier<CompletableFuture<String>> list = () -> {
      if (clientClosed.get()) {
        throw new IllegalStateException("this gated client was closed"); // as BorrowedHttpClient's checkOpen
      }
      sent.incrementAndGet();
      return CompletableFuture.completedFuture("listed");
    };
    for (boolean close : new boolean[] {false, true}) {
      queued.restart();
      workers.forEach(Runnable::run);
      workers.clear();
      int before = sent.get();
      now.addAndGet(MS);
      queued.send(list);
      workers.forEach(Runnable::run); // the first list (on the test's loop, so through a worker)
      workers.clear();
      now.addAndGet(MS);
      CompletableFuture<String> held = queued.send(list);
      assertThat(due).hasSize(1);
      due.remove(0).run(); // its time came: on its way to a worker
      assertThat(workers).hasSize(1);
      if (close) {
        queued.close();
        clientClosed.set(true);
      } else {
        queued.restart();
      }
      workers.forEach(Runnable::run);
      workers.clear();
      assertThat(held).as(close ? "after the close" : "after the restart").isNotDone();
      assertThat(sent.get() - before).as(close ? "sent, closed" : "sent, restarted").isEqualTo(1);
    }
  }
}
