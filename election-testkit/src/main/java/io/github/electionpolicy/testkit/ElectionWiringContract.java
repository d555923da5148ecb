package io.github.electionpolicy.testkit;

import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.GenerationMode;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The contract between a controller's start-up wiring and the {@link TruthTable}: implement {@link
 * #startUp(Environment, Substrate)} in a test class, and jqwik runs the whole table against your own
 * start-up path.
 *
 * <p>Report what the start-up really did, observed from outside it. A controller that starts with
 * {@code election-fabric8}'s {@code ElectionRunner} runs its start-up against the embedded Lease API of
 * {@code election-testkit-fabric8} and reads the outcome from the server: a contending runner sends its RBAC
 * preflight before {@code start()} returns, an unelected one sends nothing (see "Implement the contract" in
 * {@code docs/testkit.md}):
 *
 * <pre>{@code
 * class MyControllerWiringTest implements ElectionWiringContract {
 *   static LeaseApi api; // election-testkit-fabric8, started in @BeforeContainer, closed in @AfterContainer
 *
 *   @Override
 *   public ObservedStartup startUp(Environment environment, Substrate substrate) {
 *     ReplicaLink replica = api.replica("wiring-" + UUID.randomUUID());
 *     AtomicBoolean ranUnelected = new AtomicBoolean();
 *     try (ElectionRunner runner = MyController.startElection(replica.client(), environment, substrate,
 *         LeaderService.of(term -> ranUnelected.set(!term.isElected()), () -> { }))) {
 *       return ObservedStartup.of(replica.requestCount() > 0, ranUnelected.get())
 *           .withLoggedSummary(runner.decision().summary());
 *     }
 *   }
 * }
 * }</pre>
 *
 * <p>A controller on another client reports through recording fakes of its own Lease and reconciler ports;
 * {@code examples/downstream-ci} does that for a toy controller.
 *
 * <p>Implementing the interface inherits three jqwik properties, run by the jqwik engine (a dependency of
 * the testkit) wherever JUnit Platform tests run:
 *
 * <ul>
 *   <li>{@link #wiringFollowsEveryRowOfTheTruthTable} runs the eight rows exhaustively, each in its
 *       {@linkplain Scenario#canonical(TruthTable.Row, String) plainest spelling};
 *   <li>{@link #wiringFollowsTheTruthTableInEverySpelling} runs 200 generated spellings of the rows (kill
 *       switch case and blanks, half-set pod variables, IPv6 hosts, noise variables, random substrate names);
 *   <li>{@link #wiringStopsOnAnInvalidKillSwitch} expects start-up to fail on 100 kill-switch values the
 *       library rejects.
 * </ul>
 *
 * <p>Each failure names the row, the environment with quoted values and what was expected; see {@link
 * ElectionWiringCheck}. A controller that reads a custom kill-switch variable overrides {@link
 * #killSwitchVariable()}.
 *
 * <p>jqwik creates a new instance of the implementing class for every property; {@link #startUp} is called
 * from one thread at a time and should start from a fresh controller each time.
 */
@FunctionalInterface
public interface ElectionWiringContract {

  /**
   * Runs the controller's own start-up path, with the given environment in place of the process
   * environment and the given substrate, and reports what it did. Let exceptions escape, or report them
   * with {@link ObservedStartup#failedToStart(Throwable)}: either counts as a failed start-up.
   *
   * @param environment the environment the controller must read its kill switch and pod variables from
   * @param substrate the substrate the controller must pass to the decision
   * @return what the start-up did
   * @throws Exception if the start-up failed
   */
  ObservedStartup startUp(Environment environment, Substrate substrate) throws Exception;

  /**
   * Names the environment variable the controller reads as its kill switch. Override it when the controller
   * builds its policy with {@link ElectionPolicy.Builder#killSwitchVariable(String)}.
   *
   * @return {@value ElectionPolicy#DEFAULT_KILL_SWITCH_VARIABLE} unless overridden
   */
  default String killSwitchVariable() {
    return ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE;
  }

  /**
   * Every row of the truth table, each in its plainest spelling: the start-up must contend exactly on the
   * rows that say {@code CONTEND} and run unelected on the others.
   *
   * @param row a row of the table; all eight are tried
   */
  @Property(generation = GenerationMode.EXHAUSTIVE)
  default void wiringFollowsEveryRowOfTheTruthTable(@ForAll TruthTable.Row row) {
    ElectionWiringCheck.verify(Scenario.canonical(row, killSwitchVariable()), this);
  }

  /**
   * Generated spellings of every row: the start-up must follow the row whatever the case and blanks of the
   * kill switch, the shape of the pod variables, the noise around them and the substrate's name.
   *
   * @param scenario a generated scenario, read with {@link #killSwitchVariable()}
   */
  // 200 tries keep a slow start-up path affordable.
  @Property(tries = 200)
  default void wiringFollowsTheTruthTableInEverySpelling(@ForAll("electionWiringScenarios") Scenario scenario) {
    ElectionWiringCheck.verify(scenario, this);
  }

  /**
   * An invalid kill switch: the start-up must fail with the library's exception naming the variable and
   * the value, and start nothing.
   *
   * @param scenario a generated environment with an invalid kill switch
   */
  @Property(tries = 100)
  default void wiringStopsOnAnInvalidKillSwitch(
      @ForAll("electionWiringInvalidKillSwitches") InvalidKillSwitchScenario scenario) {
    ElectionWiringCheck.verify(scenario, this);
  }

  /**
   * Supplies {@link #wiringFollowsTheTruthTableInEverySpelling}; not meant to be called.
   *
   * @return scenarios of every row for {@link #killSwitchVariable()}
   */
  @Provide
  default Arbitrary<Scenario> electionWiringScenarios() {
    return ElectionArbitraries.scenarios(killSwitchVariable());
  }

  /**
   * Supplies {@link #wiringStopsOnAnInvalidKillSwitch}; not meant to be called.
   *
   * @return invalid-kill-switch scenarios for {@link #killSwitchVariable()}
   */
  @Provide
  default Arbitrary<InvalidKillSwitchScenario> electionWiringInvalidKillSwitches() {
    return ElectionArbitraries.invalidKillSwitchScenarios(killSwitchVariable());
  }
}
