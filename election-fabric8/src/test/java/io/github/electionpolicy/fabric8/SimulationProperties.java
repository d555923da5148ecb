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
 * The deterministic fault simulation of the Lease protocol: the real {@link LeaseProtocol}, driven as
 * {@link LeaseElector} drives it, on 2 to 5 simulated replicas against a simulated API server, under generated
 * fault schedules (see {@link SimSchedule}), with the invariants of {@link SimInvariants} checked at every
 * simulated instant. A failing schedule is shrunk by jqwik and printed with its seed; the seed replays it.
 *
 * <p>Every build runs at least {@code simulation.steps} replica steps (protocol inputs), 1,000,000 by default;
 * a long run: {@code mvn -pl election-fabric8 test -Dtest='Simulation*' -Dsimulation.steps=100000000}, which
 * makes each schedule (its fault phase and its number of faults) about steps / 880,000 times longer, so the same
 * number of schedules makes that many steps. The run fails if it made fewer steps than asked.
 *
 * <p>At the end one line sums it up: {@code SIMULATION schedules=... broken_variants_caught=K/K}.
 */
class SimulationProperties {

  static final long STEPS = Long.getLong("simulation.steps", 1_000_000L);
  static final int TRIES = 2400;
  /**
   * How much longer each schedule is than in a normal build: one schedule of scale s makes about 440 × s + 130
   * replica steps, so 2,400 of them at scale 1 make about 1.3 million.
   */
  static final int SCALE = STEPS <= 1_000_000L ? 1 : (int) ((STEPS + 879_999L) / 880_000L);
  /** How many generated schedules a broken variant may take to be caught. */
  static final int BROKEN_VARIANT_BUDGET = 300;
  static final long BROKEN_VARIANT_SEED = 20260101L;

  private static final SimulationTotals TOTALS = new SimulationTotals();

  @Provide
  Arbitrary<SimSchedule> schedules() {
    return SimSchedules.schedules(SCALE);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.FULL)
  void theRealProtocolKeepsEveryInvariant(@ForAll("schedules") SimSchedule schedule) {
    Simulator.Result result = Simulator.run(schedule, SimVariant.REAL);
    TOTALS.add(result);
    assertThat(result.invariants().violations()).as("violations under %s", schedule).isEmpty();
  }

  @Example
  void everyBrokenVariantIsCaught() {
    Map<SimVariant, Integer> caughtAfter = new EnumMap<>(SimVariant.class);
    List<SimVariant> missed = new ArrayList<>();
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
    }
    TOTALS.brokenVariants(caughtAfter.size(), caughtAfter.size() + missed.size());
    System.out.println("simulation broken variants caught after n schedules: " + caughtAfter);
    assertThat(missed).as("broken variants no invariant caught within %d schedules", BROKEN_VARIANT_BUDGET)
        .isEmpty();
  }

  @AfterContainer
  static void report() {
    System.out.println(TOTALS.details());
    System.out.println(TOTALS.line());
    if (TOTALS.replicaSteps() < STEPS) {
      throw new AssertionError("the simulation ran " + TOTALS.replicaSteps() + " replica steps, fewer than "
          + "simulation.steps=" + STEPS + ": raise TRIES");
    }
  }
}
