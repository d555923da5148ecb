package io.github.electionpolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EnvironmentTest {

  @Test
  void ofCopiesTheMap() {
    Map<String, String> variables = new HashMap<>(Map.of("A", "1"));
    Environment env = Environment.of(variables);

    variables.put("A", "2");
    variables.put("B", "3");

    assertThat(env.get("A")).contains("1");
    assertThat(env.get("B")).isEmpty();
  }

  @Test
  void ofKeepsEmptyAndBlankValues() {
    Environment env = Environment.of(Map.of("EMPTY", "", "BLANK", " "));

    assertThat(env.get("EMPTY")).contains("");
    assertThat(env.get("BLANK")).contains(" ");
    assertThat(env.get("UNSET")).isEmpty();
  }

  @Test
  void ofRejectsNullMap() {
    assertThatThrownBy(() -> Environment.of(null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("variables");
  }

  @Test
  void ofRejectsNullValues() {
    Map<String, String> variables = new HashMap<>();
    variables.put("A", null);

    assertThatThrownBy(() -> Environment.of(variables)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void getRejectsNullName() {
    assertThatThrownBy(() -> Environment.of(Map.of()).get(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> Environment.system().get(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void systemReadsTheProcessEnvironment() {
    String path = System.getenv("PATH");

    assertThat(Environment.system().get("PATH")).isEqualTo(java.util.Optional.ofNullable(path));
    assertThat(Environment.system().get("ELECTION_POLICY_SURELY_UNSET_VARIABLE")).isEmpty();
  }

  @Test
  void mapEnvironmentsWithTheSameVariablesAreEqual() {
    assertThat(Environment.of(Map.of("A", "1"))).isEqualTo(Environment.of(Map.of("A", "1")))
        .hasSameHashCodeAs(Environment.of(Map.of("A", "1")))
        .hasToString("Environment.of({A=1})");
  }
}
