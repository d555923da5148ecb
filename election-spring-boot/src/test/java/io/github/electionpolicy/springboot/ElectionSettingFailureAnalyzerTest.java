package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.fabric8.LeaseSettings;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A start-up that fails on a setting is reported by Spring Boot with the library's message as the description
 * and, as the action, the property (or environment variable) to change.
 */
@ExtendWith(OutputCaptureExtension.class)
class ElectionSettingFailureAnalyzerTest {

  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class Application {}

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
      "leaseName, election.lease-name",
      "namespace, election.namespace",
      "identity, election.identity",
      "leaseDuration, election.lease-duration",
      "renewDeadline, election.renew-deadline",
      "retryPeriod, election.retry-period",
      "requestTimeout, election.request-timeout",
      "healthBudget, election.health-budget",
      "stopTimeout, election.stop-timeout",
      "killSwitchVariable, election.kill-switch-variable",
      "substrate name, election.substrate.name",
      "election.loss-policy, election.loss-policy"})
  void eachSettingOfTheLibraryIsNamedAsItsProperty(String setting, String property) {
    assertThat(ElectionSettingFailureAnalyzer.property(setting)).isEqualTo(property);
    assertThat(ElectionSettingFailureAnalyzer.action(setting)).startsWith("Change the property " + property + " ");
  }

  @Test
  void theKillSwitchsValueIsNamedAsTheEnvironmentVariable() {
    assertThat(ElectionSettingFailureAnalyzer.property("LEADER_ELECTION_ENABLED")).isNull();
    assertThat(ElectionSettingFailureAnalyzer.action("ORDERS_ELECTION"))
        .startsWith("Change the environment variable ORDERS_ELECTION ");
  }

  /**
   * The kill switch may be any variable name of letters, digits and underscores (election.kill-switch-variable),
   * read through Spring's environment, so also a property of that name: one in camel case ({@code leaderElection})
   * or in lower case was taken for a setting of the library, and the report told the user to change a property
   * that does not exist ({@code election.leader-election}) instead of the variable whose value failed. Found by a
   * review of the integration.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"leaderElection", "electionswitch"})
  void aKillSwitchVariableNamedLikeASettingIsStillNamedAsTheVariable(String variable, CapturedOutput output) {
    Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(Application.class)
        .web(WebApplicationType.NONE)
        .run("--spring.main.banner-mode=off", "--election.lease-name=orders-controller",
            "--election.kill-switch-variable=" + variable, "--" + variable + "=maybe"));

    assertThat(Contexts.settingFailure(failure).setting()).isEqualTo(variable);
    assertThat(ElectionSettingFailureAnalyzer.property(variable)).isNull();
    assertThat(output.getOut() + output.getErr())
        .contains("APPLICATION FAILED TO START")
        .contains("Change the environment variable " + variable + " ")
        .doesNotContain("Change the property election.");
  }

  @Test
  void theAnalysisIsTheLibrarysMessageAndThePropertyToChange() {
    InvalidElectionSettingException failure = (InvalidElectionSettingException) catchThrowable(
        () -> LeaseSettings.builder().leaseName("a").renewDeadline(Duration.ofSeconds(15)).build());

    FailureAnalysis analysis = new ElectionSettingFailureAnalyzer()
        .analyze(new IllegalStateException("wrapped", failure));

    assertThat(analysis.getDescription()).isEqualTo(failure.getMessage());
    assertThat(analysis.getAction()).isEqualTo("Change the property election.renew-deadline (in "
        + "application.properties or application.yml, or ELECTION_RENEWDEADLINE in the environment) to an "
        + "accepted value.");
    assertThat(analysis.getCause()).isSameAs(failure);
  }

  @Test
  void springBootsFailureReportShowsTheAnalysis(CapturedOutput output) {
    Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(Application.class)
        .web(WebApplicationType.NONE)
        .run("--spring.main.banner-mode=off", "--election.lease-name=orders-controller",
            "--election.renew-deadline=15s"));

    assertThat(Contexts.settingFailure(failure).setting()).isEqualTo("renewDeadline");
    assertThat(output.getOut() + output.getErr())
        .contains("APPLICATION FAILED TO START")
        .contains(Contexts.settingFailure(failure).getMessage())
        .contains("Change the property election.renew-deadline");
  }
}
