package io.github.electionpolicy.testkit;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionDecision.Outcome;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.Substrate;
import java.util.Objects;
import java.util.Optional;

/**
 * Runs a controller's start-up path for one scenario and fails with an {@link AssertionError} when what it
 * did differs from the {@link TruthTable}. This is the check behind every property of {@link
 * ElectionWiringContract}; call it directly to check a single scenario from a plain JUnit test:
 *
 * <pre>{@code
 * @Test
 * void rowThreeContends() {
 *   Scenario scenario = Scenario.canonical(TruthTable.rows().get(2));
 *   ElectionWiringCheck.verify(scenario, (environment, substrate) -> myController.startUp(environment, substrate));
 * }
 * }</pre>
 *
 * <p>A failure message starts with the row, then gives what was expected, what was observed, the
 * environment with quoted values, the substrate, the kill-switch variable and the library's own summary for
 * that environment:
 *
 * <pre>
 * election wiring does not follow row 3 of the truth table
 *   expected:    CONTEND [SUBSTRATE_USES_KUBERNETES_API]: contend for the leader Lease and start no reconciler without it
 *   observed:    started reconcilers without leader election and did not contend
 *   row:         row 3 (kill switch ELECTION_ON, host OUTSIDE_POD, substrate uses the Kubernetes API)
 *   environment: {LEADER_ELECTION_ENABLED=" yEs"}
 *   substrate:   kubernetes (uses the Kubernetes API)
 *   kill switch: read from LEADER_ELECTION_ENABLED
 *   library:     Contending for the leader Lease because substrate "kubernetes" uses the Kubernetes API; ...
 * </pre>
 *
 * <p>Stateless and thread-safe; it is as thread-safe as the wiring it runs.
 */
public final class ElectionWiringCheck {

  private ElectionWiringCheck() {}

  /**
   * Checks that the start-up path does what the scenario's row expects: contend for the Lease without
   * starting reconcilers for {@link Outcome#CONTEND}, start reconcilers without contending for {@link
   * Outcome#RUN_UNELECTED}; and, if it reports a logged summary, that the summary contains the library's
   * summary for the scenario.
   *
   * @param scenario the environment and substrate to start up with, and the row they realise
   * @param wiring the controller's start-up path; an exception it throws counts as a failed start-up
   * @throws AssertionError if the start-up did something else, naming the row, the environment and what was
   *     expected
   */
  public static void verify(Scenario scenario, ElectionWiringContract wiring) {
    Objects.requireNonNull(scenario, "scenario");
    Objects.requireNonNull(wiring, "wiring");
    ObservedStartup observed = startUp(wiring, scenario.environment(), scenario.substrate());
    TruthTable.Row row = scenario.row();
    boolean contend = row.outcome() == Outcome.CONTEND;
    boolean followsRow = observed.failure().isEmpty()
        && observed.contendedForLease() == contend
        && observed.startedReconcilersUnelected() == !contend;
    Optional<ElectionDecision> library = libraryDecision(scenario);
    if (!followsRow) {
      throw failure("election wiring does not follow " + rowName(row) + " of the truth table",
          "  expected:    " + row.describeExpectation() + ": " + (contend
              ? "contend for the leader Lease and start no reconciler without it"
              : "start the reconcilers without leader election and do not contend") + "\n"
              + "  observed:    " + observed.describe() + "\n"
              + indent(scenario.describe()) + "\n"
              + "  library:     " + library.map(ElectionWiringCheck::describeLibrary)
                  .orElse("<the library itself failed to decide>"),
          observed.failure().orElse(null));
    }
    Optional<String> logged = observed.loggedSummary();
    if (logged.isPresent() && library.isPresent() && !logged.get().contains(library.get().summary())) {
      throw failure("election wiring follows " + rowName(row)
              + " of the truth table but logged a summary that is not the library's",
          "  expected:    a log line containing " + Render.quote(library.get().summary()) + "\n"
              + "  observed:    " + Render.quote(logged.get()) + "\n"
              + indent(scenario.describe()),
          null);
    }
  }

  /**
   * Checks that the start-up path fails with an {@link InvalidElectionSettingException} (possibly wrapped)
   * that names the kill-switch variable and the rejected value, instead of guessing and starting.
   *
   * @param scenario an environment whose kill switch holds an invalid value
   * @param wiring the controller's start-up path; an exception it throws counts as a failed start-up
   * @throws AssertionError if the start-up did anything else
   */
  public static void verify(InvalidKillSwitchScenario scenario, ElectionWiringContract wiring) {
    Objects.requireNonNull(scenario, "scenario");
    Objects.requireNonNull(wiring, "wiring");
    ObservedStartup observed = startUp(wiring, scenario.environment(), scenario.substrate());
    Optional<InvalidElectionSettingException> rejection = observed.failure()
        .flatMap(ElectionWiringCheck::invalidSettingIn)
        .filter(e -> scenario.killSwitchVariable().equals(e.setting())
            && scenario.invalidValue().equals(e.value()));
    if (rejection.isEmpty()) {
      throw failure("election wiring did not stop on an invalid kill switch",
          "  expected:    start-up fails with an InvalidElectionSettingException naming "
              + scenario.killSwitchVariable() + "=" + Render.quote(scenario.invalidValue())
              + ", and starts nothing\n"
              + "  observed:    " + observed.describe() + "\n"
              + indent(scenario.describe()),
          observed.failure().orElse(null));
    }
  }

  private static ObservedStartup startUp(
      ElectionWiringContract wiring, Environment environment, Substrate substrate) {
    ObservedStartup observed;
    try {
      observed = wiring.startUp(environment, substrate);
    } catch (Exception e) {
      return ObservedStartup.failedToStart(e);
    }
    if (observed == null) {
      throw new AssertionError("ElectionWiringContract.startUp returned null: return what the start-up did, "
          + "e.g. ObservedStartup.contended() or ObservedStartup.ranUnelected()");
    }
    return observed;
  }

  private static Optional<ElectionDecision> libraryDecision(Scenario scenario) {
    try {
      return Optional.of(scenario.decide());
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  private static String describeLibrary(ElectionDecision decision) {
    return decision.outcome() + " " + decision.reasons() + ": " + decision.summary();
  }

  private static Optional<InvalidElectionSettingException> invalidSettingIn(Throwable failure) {
    // Bounded walk: a controller may wrap the library's exception, and a cause chain may loop.
    Throwable cause = failure;
    for (int depth = 0; cause != null && depth < 16; depth++, cause = cause.getCause()) {
      if (cause instanceof InvalidElectionSettingException invalid) {
        return Optional.of(invalid);
      }
    }
    return Optional.empty();
  }

  private static String rowName(TruthTable.Row row) {
    return "row " + row.number();
  }

  private static String indent(String lines) {
    return "  " + lines.replace("\n", "\n  ");
  }

  private static AssertionError failure(String headline, String details, Throwable cause) {
    return new AssertionError(headline + "\n" + details, cause);
  }
}
