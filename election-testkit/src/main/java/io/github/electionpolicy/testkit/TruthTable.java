package io.github.electionpolicy.testkit;

import static io.github.electionpolicy.ElectionDecision.Outcome.CONTEND;
import static io.github.electionpolicy.ElectionDecision.Outcome.RUN_UNELECTED;
import static io.github.electionpolicy.ElectionDecision.Reason.IN_KUBERNETES_POD;
import static io.github.electionpolicy.ElectionDecision.Reason.KILL_SWITCH_OFF;
import static io.github.electionpolicy.ElectionDecision.Reason.OUTSIDE_POD_WITHOUT_KUBERNETES_API;
import static io.github.electionpolicy.ElectionDecision.Reason.SUBSTRATE_USES_KUBERNETES_API;
import static io.github.electionpolicy.KillSwitch.State.ELECTION_OFF;
import static io.github.electionpolicy.KillSwitch.State.ELECTION_ON;
import static io.github.electionpolicy.ProcessHost.Kind.KUBERNETES_POD;
import static io.github.electionpolicy.ProcessHost.Kind.OUTSIDE_POD;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionDecision.Outcome;
import io.github.electionpolicy.ElectionDecision.Reason;
import io.github.electionpolicy.KillSwitch;
import io.github.electionpolicy.ProcessHost;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The decision's specification: all eight combinations of kill switch, process host and substrate
 * capability, each with the outcome and the exact set of reasons it must produce.
 *
 * <p>The rows are written out here as data, once, and nothing else in the project restates them: the
 * properties of the testkit, the {@link ElectionWiringContract} and the table in {@code
 * docs/configuration.md} (see {@link #toMarkdown()}) all read them from this class. The expected values are
 * deliberately not computed with the library's rule, so that a change to the rule shows up as a
 * disagreement with this table.
 *
 * <pre>{@code
 * TruthTable.Row row = TruthTable.row(KillSwitch.State.ELECTION_ON, ProcessHost.Kind.OUTSIDE_POD, true);
 * row.outcome();  // CONTEND
 * row.reasons();  // [SUBSTRATE_USES_KUBERNETES_API]
 *
 * ElectionDecision decision = ElectionPolicy.defaults().decide(environment, substrate);
 * assertThat(decision.reasons()).isEqualTo(TruthTable.rowFor(decision).reasons());
 * }</pre>
 *
 * <p>Stateless and thread-safe; rows are immutable.
 */
public final class TruthTable {

  private static final List<Row> ROWS = List.of(
      new Row(1, ELECTION_ON, KUBERNETES_POD, true, CONTEND,
          EnumSet.of(IN_KUBERNETES_POD, SUBSTRATE_USES_KUBERNETES_API)),
      new Row(2, ELECTION_ON, KUBERNETES_POD, false, CONTEND, EnumSet.of(IN_KUBERNETES_POD)),
      new Row(3, ELECTION_ON, OUTSIDE_POD, true, CONTEND, EnumSet.of(SUBSTRATE_USES_KUBERNETES_API)),
      new Row(4, ELECTION_ON, OUTSIDE_POD, false, RUN_UNELECTED,
          EnumSet.of(OUTSIDE_POD_WITHOUT_KUBERNETES_API)),
      new Row(5, ELECTION_OFF, KUBERNETES_POD, true, RUN_UNELECTED, EnumSet.of(KILL_SWITCH_OFF)),
      new Row(6, ELECTION_OFF, KUBERNETES_POD, false, RUN_UNELECTED, EnumSet.of(KILL_SWITCH_OFF)),
      new Row(7, ELECTION_OFF, OUTSIDE_POD, true, RUN_UNELECTED, EnumSet.of(KILL_SWITCH_OFF)),
      new Row(8, ELECTION_OFF, OUTSIDE_POD, false, RUN_UNELECTED, EnumSet.of(KILL_SWITCH_OFF)));

  private TruthTable() {}

  /**
   * Returns the eight rows, numbered 1 to 8 in this order: election on before off, pod before outside,
   * substrate using the Kubernetes API before not.
   *
   * @return an immutable list of the eight rows
   */
  public static List<Row> rows() {
    return ROWS;
  }

  /**
   * Looks up the row for the given inputs.
   *
   * @param killSwitch what the kill switch says
   * @param processHost where the process runs
   * @param substrateUsesKubernetesApi whether the substrate uses the Kubernetes API
   * @return the one row with these inputs
   * @throws NullPointerException if {@code killSwitch} or {@code processHost} is {@code null}
   */
  public static Row row(
      KillSwitch.State killSwitch, ProcessHost.Kind processHost, boolean substrateUsesKubernetesApi) {
    Objects.requireNonNull(killSwitch, "killSwitch");
    Objects.requireNonNull(processHost, "processHost");
    for (Row row : ROWS) {
      if (row.killSwitch() == killSwitch
          && row.processHost() == processHost
          && row.substrateUsesKubernetesApi() == substrateUsesKubernetesApi) {
        return row;
      }
    }
    // The eight rows cover every combination of two enums of two constants and a boolean.
    throw new IllegalStateException("the truth table has no row for " + killSwitch + ", " + processHost
        + ", substrateUsesKubernetesApi=" + substrateUsesKubernetesApi);
  }

  /**
   * Looks up the row for the inputs a decision was made from. The row's outcome and reasons are what the
   * decision should have; comparing them is how the tests check the library.
   *
   * @param decision a decision made by the library
   * @return the row for the decision's kill switch state, process host kind and substrate capability
   */
  public static Row rowFor(ElectionDecision decision) {
    Objects.requireNonNull(decision, "decision");
    return row(
        decision.killSwitch().state(),
        decision.processHost().kind(),
        decision.substrate().usesKubernetesApi());
  }

  /**
   * Renders the table as GitHub-flavoured Markdown, one line per row after the header, each line ending
   * with a line feed. The documentation embeds exactly this text, and a test keeps the two equal.
   *
   * @return the Markdown table
   */
  public static String toMarkdown() {
    StringBuilder markdown = new StringBuilder()
        .append("| Row | Kill switch | Process host | Substrate uses the Kubernetes API | Outcome | Reasons |\n")
        .append("|----:|-------------|--------------|-----------------------------------|---------|---------|\n");
    for (Row row : ROWS) {
      markdown.append("| ").append(row.number())
          .append(" | `").append(row.killSwitch()).append('`')
          .append(" | `").append(row.processHost()).append('`')
          .append(" | ").append(row.substrateUsesKubernetesApi() ? "yes" : "no")
          .append(" | `").append(row.outcome()).append('`')
          .append(" | ").append(row.reasons().stream().map(r -> "`" + r + "`").collect(Collectors.joining(", ")))
          .append(" |\n");
    }
    return markdown.toString();
  }

  /**
   * One row of the table: three inputs and what they must lead to.
   *
   * <p>Immutable and thread-safe. {@link #toString()} is the short description used in failure messages,
   * e.g. {@code row 3 (kill switch ELECTION_ON, host OUTSIDE_POD, substrate uses the Kubernetes API)
   * expects CONTEND [SUBSTRATE_USES_KUBERNETES_API]}.
   *
   * @param number the row's number, 1 to 8, as in the documentation
   * @param killSwitch what the kill switch says
   * @param processHost where the process runs
   * @param substrateUsesKubernetesApi whether the substrate uses the Kubernetes API
   * @param outcome the outcome these inputs must lead to
   * @param reasons the exact reasons the decision must give, iterated in the order of {@link Reason}
   */
  public record Row(
      int number,
      KillSwitch.State killSwitch,
      ProcessHost.Kind processHost,
      boolean substrateUsesKubernetesApi,
      Outcome outcome,
      Set<Reason> reasons) {

    /**
     * Validates the components and makes an unmodifiable copy of the reasons.
     *
     * @param number the row's number
     * @param killSwitch what the kill switch says
     * @param processHost where the process runs
     * @param substrateUsesKubernetesApi whether the substrate uses the Kubernetes API
     * @param outcome the expected outcome
     * @param reasons the expected reasons, not empty
     * @throws NullPointerException if a component is {@code null}
     * @throws IllegalArgumentException if {@code reasons} is empty
     */
    public Row {
      Objects.requireNonNull(killSwitch, "killSwitch");
      Objects.requireNonNull(processHost, "processHost");
      Objects.requireNonNull(outcome, "outcome");
      Objects.requireNonNull(reasons, "reasons");
      if (reasons.isEmpty()) {
        throw new IllegalArgumentException("reasons=[] is not valid: a decision always has a reason");
      }
      reasons = Collections.unmodifiableSet(EnumSet.copyOf(reasons));
    }

    /**
     * Describes the row's inputs in words, e.g. {@code row 3 (kill switch ELECTION_ON, host OUTSIDE_POD,
     * substrate uses the Kubernetes API)}.
     *
     * @return a one-line description of the inputs
     */
    public String describeInputs() {
      return "row " + number + " (kill switch " + killSwitch + ", host " + processHost + ", substrate "
          + (substrateUsesKubernetesApi ? "uses" : "does not use") + " the Kubernetes API)";
    }

    /**
     * Describes what the row expects, e.g. {@code CONTEND [SUBSTRATE_USES_KUBERNETES_API]}.
     *
     * @return the outcome followed by the reasons
     */
    public String describeExpectation() {
      return outcome + " " + reasons;
    }

    @Override
    public String toString() {
      return describeInputs() + " expects " + describeExpectation();
    }
  }
}
