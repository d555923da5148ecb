package io.github.electionpolicy.fabric8;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.pastalab.fray.junit.junit5.FrayTestExtension;
import org.pastalab.fray.junit.junit5.annotations.FrayTest;

/**
 * Shows, in every build, that the exploration of {@link RunnerBoundaryExplorationTest} can fail: the same close
 * race over a runner with {@link RunnerFlaw#CLOSED_FLAG_SET_AFTER_HANDOFF} (close() sets its closed flag only
 * after handing the close to the loop) must break an invariant in some explored schedule. Each schedule's
 * violations are counted, not thrown, so that the exploration goes on; once every schedule ran, the count must
 * be above zero. (Fray runs the iterations in classes of its own loading: the counts live in the system
 * properties, which both see.)
 */
@ExtendWith(FrayTestExtension.class)
class ReintroducedRaceExplorationTest {

  private static final String RUNS = "exploration.reintroducedRace.runs";
  private static final String CAUGHT = "exploration.reintroducedRace.caught";

  @FrayTest(iterations = RunnerBoundaryExplorationTest.ITERATIONS, resetClassLoaderPerIteration = false)
  void closeRacesWithTheClosedFlagSetLate() throws InterruptedException {
    RunnerBoundaryExplorationTest.Run run =
        RunnerBoundaryExplorationTest.closeWhileStarting(RunnerFlaw.CLOSED_FLAG_SET_AFTER_HANDOFF);
    count(RUNS).incrementAndGet();
    if (!run.violations().isEmpty()) {
      count(CAUGHT).incrementAndGet();
    }
  }

  @AfterAll
  static void theRaceWasFound() {
    int runs = count(RUNS).get();
    int caught = count(CAUGHT).get();
    System.out.println("EXPLORATION " + RunnerFlaw.CLOSED_FLAG_SET_AFTER_HANDOFF + ": invariants broken in "
        + caught + " of " + runs + " explored schedules");
    if (runs != RunnerBoundaryExplorationTest.ITERATIONS) {
      throw new AssertionError("expected " + RunnerBoundaryExplorationTest.ITERATIONS + " explored schedules, "
          + "counted " + runs + ": the count does not reach this class");
    }
    if (caught == 0) {
      throw new AssertionError("no explored schedule of " + runs + " caught " + RunnerFlaw.CLOSED_FLAG_SET_AFTER_HANDOFF
          + ": the exploration's invariants cannot fail on this race");
    }
  }

  private static AtomicInteger count(String name) {
    return (AtomicInteger) System.getProperties().computeIfAbsent(name, k -> new AtomicInteger());
  }
}
