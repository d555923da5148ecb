package io.github.electionpolicy.testkit;

import static io.github.electionpolicy.ElectionDecision.Reason.IN_KUBERNETES_POD;
import static io.github.electionpolicy.ElectionDecision.Reason.KILL_SWITCH_OFF;
import static io.github.electionpolicy.ElectionDecision.Reason.OUTSIDE_POD_WITHOUT_KUBERNETES_API;
import static io.github.electionpolicy.ElectionDecision.Reason.SUBSTRATE_USES_KUBERNETES_API;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionDecision.Outcome;
import io.github.electionpolicy.ElectionDecision.Reason;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.ProcessHost;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.Tuple.Tuple2;

/** The library against the table and its own promises, for generated spellings of every row. */
class DecisionProperties {

  private static final Set<Reason> REASONS_TO_CONTEND = EnumSet.of(IN_KUBERNETES_POD, SUBSTRATE_USES_KUBERNETES_API);

  @Property
  void everyGeneratedEnvironmentAgreesWithTheTable(@ForAll Scenario scenario) {
    ElectionDecision decision = scenario.decide();

    assertThat(TruthTable.rowFor(decision)).as("row the library read from %s", scenario).isEqualTo(scenario.row());
    assertThat(decision.outcome()).as("outcome for %s", scenario).isEqualTo(scenario.row().outcome());
    assertThat(decision.reasons()).as("reasons for %s", scenario).isEqualTo(scenario.row().reasons());
  }

  @Property
  void anInvalidKillSwitchAlwaysFailsNamingTheVariableAndTheValue(@ForAll InvalidKillSwitchScenario scenario) {
    InvalidElectionSettingException rejection = catchThrowableOfType(
        InvalidElectionSettingException.class,
        () -> scenario.policy().decide(scenario.environment(), scenario.substrate()));

    assertThat(rejection).as("exception for %s", scenario).isNotNull();
    assertThat(rejection.setting()).isEqualTo(scenario.killSwitchVariable());
    assertThat(rejection.value()).isEqualTo(scenario.invalidValue());
    assertThat(rejection.getMessage())
        .contains(scenario.killSwitchVariable() + "=\"" + scenario.invalidValue() + "\" is not valid")
        .contains("accepted values are")
        .contains("fix:");
  }

  @Property
  void unrelatedVariablesNeverChangeADecision(@ForAll("scenariosWithNoise") Tuple2<Scenario, Map<String, String>> input) {
    Scenario scenario = input.get1();
    Scenario noisy = scenario.withExtraVariables(input.get2());

    assertThat(noisy.decide()).as("decision with extra variables %s", input.get2()).isEqualTo(scenario.decide());
  }

  @Property
  void onlyTheKillSwitchAndTheServiceVariablesAreRead(@ForAll Scenario scenario) {
    Set<String> read = Set.of(
        scenario.killSwitchVariable(), ProcessHost.SERVICE_HOST_VARIABLE, ProcessHost.SERVICE_PORT_VARIABLE);
    Map<String, String> withoutNoise = scenario.variables().entrySet().stream()
        .filter(variable -> read.contains(variable.getKey()))
        .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, TreeMap::new));
    Scenario quiet = new Scenario(scenario.row(), scenario.killSwitchVariable(), withoutNoise, scenario.substrate());

    assertThat(quiet.decide()).isEqualTo(scenario.decide());
  }

  @Property
  void contendsExactlyWhenTheReasonsAreANonEmptySubsetOfPodAndSubstrate(@ForAll Scenario scenario) {
    ElectionDecision decision = scenario.decide();
    Set<Reason> reasons = decision.reasons();
    boolean reasonsToContend = !reasons.isEmpty() && REASONS_TO_CONTEND.containsAll(reasons);

    assertThat(decision.outcome() == Outcome.CONTEND).as("CONTEND for reasons %s", reasons).isEqualTo(reasonsToContend);
    assertThat(decision.contends()).isEqualTo(decision.outcome() == Outcome.CONTEND);
    assertThat(decision).isInstanceOf(decision.contends()
        ? ElectionDecision.Contend.class : ElectionDecision.RunUnelected.class);
    if (!decision.contends()) {
      assertThat(reasons).hasSize(1).containsAnyOf(KILL_SWITCH_OFF, OUTSIDE_POD_WITHOUT_KUBERNETES_API);
    }
  }

  @Property
  void theSummaryNamesEveryReasonOnOneLine(@ForAll Scenario scenario) {
    ElectionDecision decision = scenario.decide();
    String summary = decision.summary();
    String substrate = scenario.substrate().name();

    assertThat(summary).isNotBlank().doesNotContain("\n", "\r", "\u2028", "\u2029", "\u0085");
    for (Reason reason : decision.reasons()) {
      switch (reason) {
        case KILL_SWITCH_OFF -> assertThat(summary).contains("kill switch", scenario.killSwitchVariable());
        case OUTSIDE_POD_WITHOUT_KUBERNETES_API ->
            assertThat(summary).contains("outside", "pod", substrate, "Kubernetes API");
        case IN_KUBERNETES_POD -> assertThat(summary).contains("pod", ProcessHost.SERVICE_HOST_VARIABLE);
        case SUBSTRATE_USES_KUBERNETES_API -> assertThat(summary).contains(substrate, "Kubernetes API");
      }
    }
  }

  @Property
  void decidingTwiceGivesEqualValues(@ForAll Scenario scenario) {
    ElectionDecision first = scenario.decide();
    ElectionDecision second = scenario.decide();

    assertThat(second).isEqualTo(first).hasSameHashCodeAs(first).hasToString(first.toString());
    assertThat(second.reasons()).isEqualTo(first.reasons());
    assertThat(second.warnings()).isEqualTo(first.warnings());
    assertThat(second.summary()).isEqualTo(first.summary());
  }

  @Provide
  Arbitrary<Tuple2<Scenario, Map<String, String>>> scenariosWithNoise() {
    return ElectionArbitraries.scenarios().flatMap(scenario ->
        ElectionArbitraries.noiseVariables(scenario.killSwitchVariable())
            .map(noise -> {
              Map<String, String> unrelated = new TreeMap<>(noise);
              unrelated.keySet().removeAll(scenario.variables().keySet());
              return Tuple.of(scenario, unrelated);
            }));
  }
}
