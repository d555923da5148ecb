package io.github.electionpolicy;

import com.google.common.testing.EqualsTester;
import com.google.common.testing.NullPointerTester;
import java.io.PrintStream;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Every public value type and builder of the core rejects {@code null} wherever it takes an object (guava-testlib's
 * {@link NullPointerTester} calls each public method and constructor with one {@code null} argument at a time), and
 * compares by value ({@link EqualsTester}).
 */
class ValueContractTest {

  private static final Substrate KUBERNETES = Substrate.usingKubernetesApi("kubernetes");
  private static final Substrate DIRECT = Substrate.withoutKubernetesApi("direct");
  private static final KillSwitch ON = KillSwitch.read(Environment.of(Map.of()), "LEADER_ELECTION_ENABLED");
  private static final KillSwitch OFF =
      KillSwitch.read(Environment.of(Map.of("LEADER_ELECTION_ENABLED", "false")), "LEADER_ELECTION_ENABLED");
  private static final ProcessHost OUTSIDE = new ProcessHost(Optional.empty(), Optional.empty());
  private static final ProcessHost POD = new ProcessHost(Optional.of("10.96.0.1"), Optional.of("443"));

  private static NullPointerTester tester() {
    return new NullPointerTester()
        .setDefault(Substrate.class, KUBERNETES)
        .setDefault(KillSwitch.class, ON)
        .setDefault(ProcessHost.class, POD)
        .setDefault(Environment.class, Environment.of(Map.of()))
        .setDefault(ElectionDecision.class, ElectionDecision.of(ON, POD, KUBERNETES))
        .setDefault(PrintStream.class, System.out)
        .setDefault(String[].class, new String[0]);
  }

  @Test
  void substrateRejectsNull() {
    tester().testAllPublicStaticMethods(Substrate.class);
    tester().testAllPublicConstructors(Substrate.class);
    tester().testAllPublicInstanceMethods(KUBERNETES);
  }

  @Test
  void substrateComparesByValue() {
    new EqualsTester()
        .addEqualityGroup(KUBERNETES, Substrate.usingKubernetesApi("kubernetes"), Substrate.of("kubernetes", true),
            new Substrate("kubernetes", true))
        .addEqualityGroup(Substrate.withoutKubernetesApi("kubernetes"))
        .addEqualityGroup(DIRECT, Substrate.of("direct", false))
        .testEquals();
  }

  @Test
  void killSwitchRejectsNull() {
    tester().testAllPublicStaticMethods(KillSwitch.class);
    tester().testAllPublicConstructors(KillSwitch.class);
    tester().testAllPublicInstanceMethods(ON);
  }

  @Test
  void killSwitchComparesByValue() {
    new EqualsTester()
        .addEqualityGroup(ON, KillSwitch.read(Environment.of(Map.of()), "LEADER_ELECTION_ENABLED"),
            new KillSwitch("LEADER_ELECTION_ENABLED", Optional.empty(), KillSwitch.State.ELECTION_ON))
        .addEqualityGroup(OFF)
        .addEqualityGroup(KillSwitch.read(Environment.of(Map.of("LEADER_ELECTION_ENABLED", "true")),
            "LEADER_ELECTION_ENABLED"))
        .addEqualityGroup(KillSwitch.read(Environment.of(Map.of()), "OTHER_SWITCH"))
        .testEquals();
  }

  @Test
  void processHostRejectsNull() {
    tester().testAllPublicStaticMethods(ProcessHost.class);
    tester().testAllPublicConstructors(ProcessHost.class);
    tester().testAllPublicInstanceMethods(POD);
  }

  @Test
  void processHostComparesByValue() {
    new EqualsTester()
        .addEqualityGroup(POD, ProcessHost.detect(Environment.of(
            Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443"))))
        .addEqualityGroup(OUTSIDE, ProcessHost.detect(Environment.of(Map.of())))
        .addEqualityGroup(new ProcessHost(Optional.of("10.96.0.1"), Optional.empty()))
        .testEquals();
  }

  @Test
  void electionDecisionsRejectNull() {
    tester().testAllPublicStaticMethods(ElectionDecision.class);
    tester().testAllPublicConstructors(ElectionDecision.Contend.class);
    tester().testAllPublicConstructors(ElectionDecision.RunUnelected.class);
    tester().testAllPublicInstanceMethods(ElectionDecision.of(ON, POD, KUBERNETES));
    tester().testAllPublicInstanceMethods(ElectionDecision.of(OFF, POD, KUBERNETES));
  }

  @Test
  void electionDecisionsCompareByValue() {
    new EqualsTester()
        .addEqualityGroup(ElectionDecision.of(ON, POD, KUBERNETES), new ElectionDecision.Contend(ON, POD, KUBERNETES))
        .addEqualityGroup(ElectionDecision.of(ON, POD, DIRECT))
        .addEqualityGroup(ElectionDecision.of(ON, OUTSIDE, KUBERNETES))
        .addEqualityGroup(ElectionDecision.of(ON, OUTSIDE, DIRECT), new ElectionDecision.RunUnelected(ON, OUTSIDE, DIRECT))
        .addEqualityGroup(ElectionDecision.of(OFF, POD, KUBERNETES))
        .testEquals();
  }

  @Test
  void electionPolicyAndItsBuilderRejectNull() {
    tester().testAllPublicStaticMethods(ElectionPolicy.class);
    tester().testAllPublicInstanceMethods(ElectionPolicy.defaults());
    tester().testAllPublicInstanceMethods(ElectionPolicy.builder());
  }

  @Test
  void electionPolicyComparesByValue() {
    new EqualsTester()
        .addEqualityGroup(ElectionPolicy.defaults(), ElectionPolicy.builder().build(),
            ElectionPolicy.builder().killSwitchVariable("LEADER_ELECTION_ENABLED").build())
        .addEqualityGroup(ElectionPolicy.builder().killSwitchVariable("ORDERS_ELECTION").build(),
            ElectionPolicy.builder().killSwitchVariable("ORDERS_ELECTION").build())
        .testEquals();
  }

  @Test
  void environmentsRejectNull() {
    tester().testAllPublicStaticMethods(Environment.class);
    tester().testAllPublicInstanceMethods(Environment.of(Map.of("A", "1")));
    tester().testAllPublicInstanceMethods(Environment.system());
  }

  @Test
  void fixedEnvironmentsCompareByTheirVariables() {
    new EqualsTester()
        .addEqualityGroup(Environment.of(Map.of("A", "1")), Environment.of(Map.of("A", "1")))
        .addEqualityGroup(Environment.of(Map.of("A", "2")))
        .addEqualityGroup(Environment.of(Map.of()))
        .addEqualityGroup(Environment.system(), Environment.system())
        .testEquals();
  }

  @Test
  void decisionLogAndExplainRejectNull() {
    tester().testAllPublicStaticMethods(DecisionLog.class);
    tester().testAllPublicStaticMethods(Explain.class);
  }

  @Test
  void invalidSettingExceptionRejectsNullButForAMissingValue() throws Exception {
    // The value may be null: it is how a missing setting is reported ("leaseName=<missing>").
    new NullPointerTester()
        .ignore(InvalidElectionSettingException.class.getConstructor(
            String.class, String.class, String.class, String.class))
        .testAllPublicInstanceMethods(new InvalidElectionSettingException("s", null, "a", "f"));
    for (int i : new int[] {0, 2, 3}) {
      String[] arguments = {"s", "v", "a", "f"};
      arguments[i] = null;
      org.assertj.core.api.Assertions.assertThatNullPointerException().isThrownBy(
          () -> new InvalidElectionSettingException(arguments[0], arguments[1], arguments[2], arguments[3]));
    }
  }
}
