package io.github.electionpolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.ProcessHost.Kind;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ProcessHostTest {

  private static ProcessHost detect(String host, String port) {
    Map<String, String> variables = new HashMap<>();
    if (host != null) {
      variables.put("KUBERNETES_SERVICE_HOST", host);
    }
    if (port != null) {
      variables.put("KUBERNETES_SERVICE_PORT", port);
    }
    return ProcessHost.detect(Environment.of(variables));
  }

  @Test
  void bothVariablesSetIsAPod() {
    ProcessHost host = detect("10.96.0.1", "443");

    assertThat(host.kind()).isEqualTo(Kind.KUBERNETES_POD);
    assertThat(host.isPod()).isTrue();
    assertThat(host.warnings()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"fd00:10:96::1", "::1", "[2001:db8::1]", "kubernetes.default.svc", "x"})
  void hostValuesAreNotValidatedBeyondBeingNonBlank(String value) {
    assertThat(detect(value, "6443").kind()).isEqualTo(Kind.KUBERNETES_POD);
  }

  @Test
  void neitherVariableSetIsOutsideAPodWithoutWarning() {
    ProcessHost host = detect(null, null);

    assertThat(host.kind()).isEqualTo(Kind.OUTSIDE_POD);
    assertThat(host.warnings()).isEmpty();
  }

  @Test
  void bothBlankIsOutsideAPodWithoutWarning() {
    assertThat(detect("", " ").kind()).isEqualTo(Kind.OUTSIDE_POD);
    assertThat(detect("", " ").warnings()).isEmpty();
  }

  @Test
  void missingPortIsOutsideAPodAndWarnsNamingThePort() {
    ProcessHost host = detect("10.96.0.1", null);

    assertThat(host.kind()).isEqualTo(Kind.OUTSIDE_POD);
    assertThat(host.warnings()).singleElement().asString()
        .contains("KUBERNETES_SERVICE_HOST is set but KUBERNETES_SERVICE_PORT is not set");
  }

  @Test
  void missingHostIsOutsideAPodAndWarnsNamingTheHost() {
    ProcessHost host = detect(null, "443");

    assertThat(host.kind()).isEqualTo(Kind.OUTSIDE_POD);
    assertThat(host.warnings()).singleElement().asString()
        .contains("KUBERNETES_SERVICE_PORT is set but KUBERNETES_SERVICE_HOST is not set");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "\t", " \n "})
  void blankHostCountsAsUnsetAndWarnsThatItIsBlank(String blank) {
    ProcessHost host = detect(blank, "443");

    assertThat(host.kind()).isEqualTo(Kind.OUTSIDE_POD);
    assertThat(host.warnings()).singleElement().asString()
        .contains("KUBERNETES_SERVICE_PORT is set but KUBERNETES_SERVICE_HOST is blank");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "\t"})
  void blankPortCountsAsUnsetAndWarnsThatItIsBlank(String blank) {
    ProcessHost host = detect("10.96.0.1", blank);

    assertThat(host.kind()).isEqualTo(Kind.OUTSIDE_POD);
    assertThat(host.warnings()).singleElement().asString()
        .contains("KUBERNETES_SERVICE_HOST is set but KUBERNETES_SERVICE_PORT is blank");
  }

  @Test
  void keepsTheValuesAsGiven() {
    ProcessHost host = detect(" 10.96.0.1 ", "443");

    assertThat(host.serviceHost()).contains(" 10.96.0.1 ");
    assertThat(host.servicePort()).contains("443");
  }

  @Test
  void rejectsNulls() {
    assertThatThrownBy(() -> ProcessHost.detect(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> new ProcessHost(null, Optional.empty()))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("serviceHost");
    assertThatThrownBy(() -> new ProcessHost(Optional.empty(), null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("servicePort");
  }
}
