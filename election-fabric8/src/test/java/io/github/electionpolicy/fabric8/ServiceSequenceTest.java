package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The reconcilers' start and stop sequence as a table, with plain reconciler doubles and no threads: each row
 * gives the reconcilers (what each start and stop does), then the calls expected, in order, from starting
 * them all and, if they all started, stopping them all; the outcome's kind, its failures and whether the stop
 * was clean.
 */
class ServiceSequenceTest {

  /** The doubles' shared world: the calls made, the sequence under test and the term it started under. */
  static final class World {
    final List<String> calls = new ArrayList<>();
    final AtomicLong now = new AtomicLong();
    ServiceSequence sequence;
    LeadershipTerm term;
  }

  @FunctionalInterface
  interface Hook {
    void run(World world) throws Exception;
  }

  /** A reconciler double: records its calls, runs its hooks, then throws what it is told to. */
  record Double(String name, Hook onStart, Throwable startThrows, Hook onStop, Throwable stopThrows) {
    static Double ok(String name) {
      return new Double(name, w -> { }, null, w -> { }, null);
    }

    Double startThrows(Throwable thrown) {
      return new Double(name, onStart, thrown, onStop, stopThrows);
    }

    Double stopThrows(Throwable thrown) {
      return new Double(name, onStart, startThrows, onStop, thrown);
    }

    Double inStart(Hook hook) {
      return new Double(name, hook, startThrows, onStop, stopThrows);
    }

    Double inStop(Hook hook) {
      return new Double(name, onStart, startThrows, hook, stopThrows);
    }

    LeaderService in(World world) {
      return new LeaderService() {
        @Override
        public void start(LeadershipTerm term) throws Exception {
          world.calls.add("start " + name);
          onStart.run(world);
          throwIfSet(startThrows);
        }

        @Override
        public void stop() throws Exception {
          world.calls.add("stop " + name);
          onStop.run(world);
          throwIfSet(stopThrows);
        }

        @Override
        public String toString() {
          return name;
        }
      };
    }

    private static void throwIfSet(Throwable thrown) throws Exception {
      if (thrown instanceof Exception) {
        throw (Exception) thrown;
      }
      if (thrown instanceof Error) {
        throw (Error) thrown;
      }
    }
  }

  /**
   * One row.
   *
   * @param behaviour what the row shows
   * @param doubles the reconcilers, in the order added
   * @param kind how startAll ends
   * @param calls every call, in order: startAll's, then (only if all started) stopAll's
   * @param failures each failure as "reconciler: Throwable class", start failure first
   * @param stopClean whether the stop (after the failure, the end of the term, or the full stop) was clean
   * @param fatal whether a VirtualMachineError was among the failures
   */
  record Row(String behaviour, List<Double> doubles, ServiceSequence.StartKind kind, String calls,
      List<String> failures, boolean stopClean, boolean fatal) {
    @Override
    public String toString() {
      return behaviour;
    }
  }

  static Stream<Row> rows() {
    Double r1 = Double.ok("r1");
    Double r2 = Double.ok("r2");
    Double r3 = Double.ok("r3");
    return Stream.of(
        new Row("start in order, stop in reverse", List.of(r1, r2, r3), ServiceSequence.StartKind.STARTED,
            "start r1, start r2, start r3, stop r3, stop r2, stop r1", List.of(), true, false),
        new Row("an Error from start stops those started, in reverse",
            List.of(r1, r2, r3.startThrows(new AssertionError("start"))), ServiceSequence.StartKind.FAILED,
            "start r1, start r2, start r3, stop r2, stop r1", List.of("r3: AssertionError"), true, false),
        new Row("a checked exception from start is a failed start too",
            List.of(r1, r2.startThrows(new Exception("start")), r3), ServiceSequence.StartKind.FAILED,
            "start r1, start r2, stop r1", List.of("r2: Exception"), true, false),
        new Row("the first start failing stops nothing", List.of(r1.startThrows(new IllegalStateException()), r2),
            ServiceSequence.StartKind.FAILED, "start r1", List.of("r1: IllegalStateException"), true, false),
        new Row("an Error from stop does not keep the others from stopping",
            List.of(r1, r2.stopThrows(new AssertionError("stop")), r3), ServiceSequence.StartKind.STARTED,
            "start r1, start r2, start r3, stop r3, stop r2, stop r1", List.of("r2: AssertionError"), false,
            false),
        new Row("every stop throwing still calls every stop",
            List.of(r1.stopThrows(new RuntimeException()), r2.stopThrows(new LinkageError()),
                r3.stopThrows(new AssertionError())), ServiceSequence.StartKind.STARTED,
            "start r1, start r2, start r3, stop r3, stop r2, stop r1",
            List.of("r3: AssertionError", "r2: LinkageError", "r1: RuntimeException"), false, false),
        new Row("a stop that throws after a failed start makes that stop unclean",
            List.of(r1.stopThrows(new AssertionError("stop")), r2, r3.startThrows(new RuntimeException("start"))),
            ServiceSequence.StartKind.FAILED, "start r1, start r2, start r3, stop r2, stop r1",
            List.of("r3: RuntimeException", "r1: AssertionError"), false, false),
        new Row("a VirtualMachineError from start is a failed start, and fatal",
            List.of(r1, r2.startThrows(new OutOfMemoryError("simulated"))), ServiceSequence.StartKind.FAILED,
            "start r1, start r2, stop r1", List.of("r2: OutOfMemoryError"), true, true),
        new Row("a VirtualMachineError from stop still stops the others, and is fatal",
            List.of(r1, r2.stopThrows(new StackOverflowError())), ServiceSequence.StartKind.STARTED,
            "start r1, start r2, stop r2, stop r1", List.of("r2: StackOverflowError"), false, true),
        new Row("the term ending inside a start stops those started and starts no more",
            List.of(r1, r2.inStart(w -> w.term.end()), r3), ServiceSequence.StartKind.TERM_ENDED,
            "start r1, start r2, stop r2, stop r1", List.of(), true, false),
        new Row("the term lapsing inside a start (renew deadline passed) starts no more",
            List.of(r1.inStart(w -> w.now.addAndGet(2_000)), r2), ServiceSequence.StartKind.TERM_ENDED,
            "start r1, stop r1", List.of(), true, false),
        new Row("the term ending inside a start whose cleanup stop throws reports the failure",
            List.of(r1.stopThrows(new AssertionError("stop")), r2.inStart(w -> w.term.end()), r3),
            ServiceSequence.StartKind.TERM_ENDED, "start r1, start r2, stop r2, stop r1",
            List.of("r1: AssertionError"), false, false),
        new Row("a stop that re-enters stopAll stops nothing twice",
            List.of(r1, r2.inStop(w -> w.calls.add("inner stopped " + w.sequence.stopAll().stopped())), r3),
            ServiceSequence.StartKind.STARTED,
            "start r1, start r2, start r3, stop r3, stop r2, inner stopped 0, stop r1", List.of(), true, false),
        new Row("a start that re-enters stopAll then fails stops nothing twice",
            List.of(r1, r2.inStart(w -> w.sequence.stopAll()).startThrows(new AssertionError())),
            ServiceSequence.StartKind.FAILED, "start r1, start r2, stop r1", List.of("r2: AssertionError"),
            true, false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void startsThenStopsAsTheTableSays(Row row) {
    World world = new World();
    world.sequence = new ServiceSequence(row.doubles().stream().map(d -> d.in(world))
        .collect(Collectors.toList()));
    // Valid until 1 µs on the world's clock, which only the doubles move.
    world.term = LeadershipTerm.elected("a", 1, Instant.EPOCH, "1", world.now::get, 1_000);

    ServiceSequence.StartOutcome started = world.sequence.startAll(world.term);
    // Whatever the start left running, the runner's next call stops (under its deadline): a failed start or an
    // ended term no longer stops inline, where a stop that hangs would have none.
    assertThat(started.stop()).isEqualTo(ServiceSequence.StopOutcome.NOTHING_RUNNING);
    ServiceSequence.StopOutcome stopped = world.sequence.stopAll();
    ServiceSequence.Outcome outcome = new ServiceSequence.StartOutcome(started.kind(), started.started(),
        started.startFailure(), stopped);
    boolean stopClean = stopped.clean();

    assertThat(started.kind()).isEqualTo(row.kind());
    assertThat(String.join(", ", world.calls)).isEqualTo(row.calls());
    assertThat(outcome.failures()).extracting(f -> f.service() + ": " + f.cause().getClass().getSimpleName())
        .containsExactlyElementsOf(row.failures());
    assertThat(stopClean).isEqualTo(row.stopClean());
    assertThat(outcome.fatal()).isEqualTo(row.fatal());
    assertThat(world.sequence.anyRunning()).isFalse();
    if (row.kind() != ServiceSequence.StartKind.STARTED) {
      assertThat(world.term.isValid()).as("a failed or ended start leaves the term ended").isFalse();
    }
  }

  @Test
  void aFailedStartLeavesWhatStartedForTheNextStopAll() {
    World world = new World();
    world.sequence = new ServiceSequence(Stream.of(Double.ok("r1"), Double.ok("r2"),
        Double.ok("r3").startThrows(new AssertionError())).map(d -> d.in(world)).collect(Collectors.toList()));
    world.term = LeadershipTerm.unelected("a", Instant.EPOCH, world.now::get);

    ServiceSequence.StartOutcome outcome = world.sequence.startAll(world.term);

    assertThat(outcome.started()).isEqualTo(2);
    assertThat(world.sequence.anyRunning()).as("left for the runner's stop, with its deadline").isTrue();
    assertThat(world.sequence.stopAll().stopped()).isEqualTo(2);
    assertThat(world.sequence.stopAll()).isEqualTo(ServiceSequence.StopOutcome.NOTHING_RUNNING);
  }

  @Test
  void aStartedSequenceCanStartAgainForANewTerm() {
    World world = new World();
    world.sequence = new ServiceSequence(Arrays.asList(Double.ok("r1").in(world)));

    world.sequence.startAll(LeadershipTerm.unelected("a", Instant.EPOCH, world.now::get));
    world.sequence.stopAll();
    ServiceSequence.StartOutcome again =
        world.sequence.startAll(LeadershipTerm.unelected("a", Instant.EPOCH, world.now::get));

    assertThat(again.kind()).isEqualTo(ServiceSequence.StartKind.STARTED);
    assertThat(world.calls).containsExactly("start r1", "stop r1", "start r1");
  }

  @Test
  void aStopFailureWhoseLineCannotBeWrittenStillStopsTheOthersAndIsReported() {
    // Logging what stop() threw may throw too (a user exception whose message throws, an OutOfMemoryError): the
    // safety actions happen whatever was thrown, so the services before it are still stopped and the stop is
    // reported unclean, instead of the line's failure ending stopAll() with services left running.
    World world = new World();
    world.sequence = new ServiceSequence(Stream.of(Double.ok("r1"),
        Double.ok("r2").stopThrows(new CallbackLaneTest.UnprintableFailure())).map(d -> d.in(world))
        .collect(Collectors.toList()));
    world.sequence.startAll(LeadershipTerm.unelected("a", Instant.EPOCH, world.now::get));

    ServiceSequence.StopOutcome outcome = world.sequence.stopAll();

    assertThat(world.calls).containsExactly("start r1", "start r2", "stop r2", "stop r1");
    assertThat(outcome.clean()).isFalse();
  }

  @Test
  void aStartFailureWhoseLineCannotBeWrittenStillEndsTheTermAndIsReported() {
    World world = new World();
    world.sequence = new ServiceSequence(Stream.of(Double.ok("r1"),
        Double.ok("r2").startThrows(new CallbackLaneTest.UnprintableFailure())).map(d -> d.in(world))
        .collect(Collectors.toList()));
    world.term = LeadershipTerm.unelected("a", Instant.EPOCH, world.now::get);

    ServiceSequence.StartOutcome outcome = world.sequence.startAll(world.term);

    assertThat(outcome.kind()).isEqualTo(ServiceSequence.StartKind.FAILED);
    assertThat(world.term.isValid()).as("the failed start gives the term up").isFalse();
  }
}
