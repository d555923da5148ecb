package io.github.electionpolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.KillSwitch.State;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class KillSwitchTest {
  private static final String VAR = "LEADER_ELECTION_ENABLED";

  private static KillSwitch read(String value) {
    return KillSwitch.read(Environment.of(Map.of(VAR, value)), VAR);
  }

  @ParameterizedTest
  @ValueSource(strings = {"true", "TRUE", "True", "1", "yes", "YES", "Yes", "on", "ON", "oN",
      " true", "true ", "\ttrue\n", "  On  "})
  void acceptedOnSpellingsLeaveElectionOn(String value) {
    KillSwitch killSwitch = read(value);

    assertThat(killSwitch.state()).isEqualTo(State.ELECTION_ON);
    assertThat(killSwitch.electionEnabled()).isTrue();
    assertThat(killSwitch.rawValue()).contains(value);
  }

  @ParameterizedTest
  @ValueSource(strings = {"false", "FALSE", "False", "0", "no", "NO", "No", "off", "OFF", "oFf",
      " false", "false ", "\tfalse\n", "  Off  "})
  void acceptedOffSpellingsTurnElectionOff(String value) {
    KillSwitch killSwitch = read(value);

    assertThat(killSwitch.state()).isEqualTo(State.ELECTION_OFF);
    assertThat(killSwitch.electionEnabled()).isFalse();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "   ", "\t", "\n", " \t\r\n "})
  void emptyAndBlankValuesLeaveElectionOn(String value) {
    assertThat(read(value).state()).isEqualTo(State.ELECTION_ON);
  }

  @Test
  void unsetVariableLeavesElectionOn() {
    KillSwitch killSwitch = KillSwitch.read(Environment.of(Map.of()), VAR);

    assertThat(killSwitch.state()).isEqualTo(State.ELECTION_ON);
    assertThat(killSwitch.rawValue()).isEmpty();
    assertThat(killSwitch.describe()).isEqualTo("LEADER_ELECTION_ENABLED (unset)");
  }

  @ParameterizedTest
  @ValueSource(strings = {"disabled", "enable", "treu", "2", "-1", "y", "n", "t", "f", "none",
      "true false", "on!", "'false'", "\"true\"", "0.0", "null"})
  void invalidValuesFailNamingTheVariableTheValueAndTheFix(String value) {
    assertThatThrownBy(() -> read(value))
        .isInstanceOf(InvalidElectionSettingException.class)
        .hasMessageStartingWith(VAR + "=")
        .hasMessageContaining(Text.quote(value))
        .hasMessageContaining("is not valid: accepted values are true, 1, yes, on")
        .hasMessageContaining("false, 0, no, off")
        .hasMessageContaining("fix: set LEADER_ELECTION_ENABLED=false")
        .satisfies(e -> {
          InvalidElectionSettingException invalid = (InvalidElectionSettingException) e;
          assertThat(invalid.setting()).isEqualTo(VAR);
          assertThat(invalid.value()).isEqualTo(value);
        });
  }

  @Test
  void invalidValueMessageQuotesTheValueAsGivenWithItsBlanks() {
    assertThatThrownBy(() -> read("  maybe "))
        .hasMessage("LEADER_ELECTION_ENABLED=\"  maybe \" is not valid: accepted values are "
            + KillSwitch.ACCEPTED_VALUES + "; fix: set LEADER_ELECTION_ENABLED=false to run without "
            + "leader election (one replica only), or unset it to contend as usual");
  }

  @Test
  void invalidValueWithALineBreakStaysOnOneLine() {
    assertThatThrownBy(() -> read("no\nway")).hasMessageNotContaining("\n").hasMessageContaining("\"no\\nway\"");
  }

  @Test
  void describeQuotesTheValueAsGiven() {
    assertThat(read(" Off ").describe()).isEqualTo("LEADER_ELECTION_ENABLED=\" Off \"");
  }

  @Test
  void constructorRejectsAStateThatDoesNotFollowFromTheValue() {
    assertThatThrownBy(() -> new KillSwitch(VAR, Optional.of("false"), State.ELECTION_ON))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("state=ELECTION_ON does not follow from LEADER_ELECTION_ENABLED=\"false\"");
  }

  @Test
  void constructorRejectsNulls() {
    assertThatThrownBy(() -> new KillSwitch(null, Optional.empty(), State.ELECTION_ON))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("variable");
    assertThatThrownBy(() -> new KillSwitch(VAR, null, State.ELECTION_ON))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("rawValue");
    assertThatThrownBy(() -> new KillSwitch(VAR, Optional.empty(), null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("state");
    assertThatThrownBy(() -> KillSwitch.read(null, VAR)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> KillSwitch.read(Environment.of(Map.of()), null))
        .isInstanceOf(NullPointerException.class);
  }
}
