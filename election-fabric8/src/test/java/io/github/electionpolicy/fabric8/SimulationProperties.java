package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * The deterministic fault simulation of the runner: the real {@link ElectionRunner} (its lifecycle, loop driver,
 * elector, protocol, callback lanes, service sequencing, terms and write gate), on 2 to 5 simulated replicas
 * against a simulated API server, driven through its seams on one thread in simulated time (see
 * {@link SimReplica}), under generated fault schedules (see {@link SimSchedule}), with the invariants of
 * {@link SimInvariants} checked at every simulated instant. A failing schedule is shrunk by jqwik and printed with
 * its seed; the seed replays it.
 *
 * <p>Every build runs at least {@code simulation.steps} replica events (loop tasks, timers and callback runs of
 * the replicas), 1,000,000 by default; a long run: {@code mvn -pl election-fabric8 test -Dtest='Simulation*'
 * -Dsimulation.steps=100000000}, which makes each schedule (its fault phase and its number of faults) about
 * steps / 1,000,000 times longer, so the same number of schedules makes that many events. The run fails if it made
 * fewer than asked.
 *
 * <p>At the end one line sums it up: {@code SIMULATION schedules=... broken_variants_caught=K/K (runner R/R)
 * runner_line_coverage=...}; the coverage is the simulation's alone (its JVM runs nothing else).
 */
class SimulationProperties {

  static final long STEPS = Long.getLong("simulation.steps", 1_000_000L);
  static final int TRIES = 800;
  /**
   * How much longer each schedule is than in a normal build: one schedule at scale 1 makes about 1,900 replica
   * events, so 800 of them make about 1.5 million.
   */
  static final int SCALE = STEPS <= 1_000_000L ? 1 : (int) ((STEPS + 999_999L) / 1_000_000L);
  /** How many generated schedules a broken variant may take to be caught. */
  static final int BROKEN_VARIANT_BUDGET = 1000;
  static final long BROKEN_VARIANT_SEED = 20260101L;

  private static final SimulationTotals TOTALS = new SimulationTotals();

  @Provide
  Arbitrary<SimSchedule> schedules() {
    return SimSchedules.schedules(SCALE);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.FULL)
  void theRealRunnerKeepsEveryInvariant(@ForAll("schedules") SimSchedule schedule) {
    Simulator.Result result = Simulator.run(schedule, SimVariant.REAL);
    TOTALS.add(result);
    assertThat(result.invariants().violations()).as("violations under %s", schedule).isEmpty();
  }

  @Example
  void everyBrokenVariantIsCaught() {
    Map<SimVariant, Integer> caughtAfter = new EnumMap<>(SimVariant.class);
    List<SimVariant> missed = new ArrayList<>();
    int runnerCaught = 0;
    int runner = 0;
    for (SimVariant variant : SimVariant.values()) {
      if (!variant.deliberatelyBroken()) {
        continue;
      }
      var generator = SimSchedules.schedules(1).generator(1000);
      Random random = new Random(BROKEN_VARIANT_SEED);
      int tried = 0;
      boolean caught = false;
      while (tried < BROKEN_VARIANT_BUDGET && !caught) {
        tried++;
        caught = !Simulator.run(generator.next(random).value(), variant).invariants().passed();
      }
      if (caught) {
        caughtAfter.put(variant, tried);
      } else {
        missed.add(variant);
      }
      if (variant.inRunner()) {
        runner++;
        runnerCaught += caught ? 1 : 0;
      }
    }
    TOTALS.brokenVariants(caughtAfter.size(), caughtAfter.size() + missed.size(), runnerCaught, runner);
    System.out.println("simulation broken variants caught after n schedules: " + caughtAfter);
    assertThat(missed).as("broken variants no invariant caught within %d schedules", BROKEN_VARIANT_BUDGET)
        .isEmpty();
  }

  @AfterContainer
  static void report() {
    System.out.println(TOTALS.details());
    System.out.println(TOTALS.line());
    if (TOTALS.replicaSteps() < STEPS) {
      throw new AssertionError("the simulation ran " + TOTALS.replicaSteps() + " replica events, fewer than "
          + "simulation.steps=" + STEPS + ": raise TRIES");
    }
  }
}
