package io.github.electionpolicy.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Invalid options end the demo with status 2 and a message naming the option, the value and what is accepted. */
class DemoOptionsTest {

  private final Printed out = new Printed();
  private final Printed err = new Printed();

  private int demo(String... args) {
    return Demo.run(args, out.stream, err.stream);
  }

  @Test
  void replicasOutOfRangeIsRejected() {
    assertThat(demo("--replicas", "0")).isEqualTo(Demo.EXIT_INVALID);
    assertThat(err.text()).contains("--replicas=\"0\" is not valid: accepted values are a whole number from 1 to 9");
    assertThat(out.text()).isEmpty();
  }

  @Test
  void aDurationWithoutUnitIsRejected() {
    assertThat(demo("--retry-period", "200")).isEqualTo(Demo.EXIT_INVALID);
    assertThat(err.text()).contains("--retry-period=\"200\" is not valid: accepted values are a whole number "
        + "followed by ms, s or m");
  }

  @Test
  void timingsThatBreakTheAdaptersRuleAreRejectedNamingTheOption() {
    assertThat(demo("--renew-deadline", "3s")).isEqualTo(Demo.EXIT_INVALID);
    assertThat(err.text()).contains("demo: --renew-deadline: renewDeadline=\"3s\" is not valid")
        .contains("shorter than leaseDuration=2s");
  }

  @Test
  void aLeaseDurationInMillisecondsMustBeWholeSeconds() {
    assertThat(demo("--lease-duration", "2500ms")).isEqualTo(Demo.EXIT_INVALID);
    assertThat(err.text()).contains("demo: --lease-duration: leaseDuration=\"2.5s\" is not valid")
        .contains("whole seconds");
  }

  @Test
  void anUnknownSubstrateIsRejected() {
    assertThat(demo("--substrate", "kafka")).isEqualTo(Demo.EXIT_INVALID);
    assertThat(err.text()).contains("--substrate=\"kafka\" is not valid: accepted values are kubernetes");
  }

  @Test
  void aKillSwitchValueTheRealSwitchRejectsIsRejected() {
    assertThat(demo("--kill-switch", "maybe")).isEqualTo(Demo.EXIT_INVALID);
    assertThat(err.text()).contains("--kill-switch=\"maybe\" is not valid: accepted values are on or off");
  }

  @Test
  void anUnknownOptionIsNamed() {
    assertThat(demo("--replica", "3")).isEqualTo(Demo.EXIT_INVALID);
    assertThat(err.text()).contains("option=\"--replica\" is not valid: accepted values are --replicas,");
  }

  @Test
  void anOptionWithoutItsValueIsRejected() {
    assertThat(demo("--replicas")).isEqualTo(Demo.EXIT_INVALID);
    assertThat(err.text()).contains("--replicas without a value is not valid");
  }

  @Test
  void masterMustBeAnHttpUrl() {
    assertThat(demo("--master", "ftp://cluster")).isEqualTo(Demo.EXIT_INVALID);
    assertThat(err.text()).contains("--master=\"ftp://cluster\" is not valid: accepted values are an http:// or "
        + "https:// URL");
  }

  @Test
  void masterAndKubeconfigTogetherAreRejected() {
    assertThat(demo("--master", "https://127.0.0.1:6443", "--kubeconfig", "kubeconfig")).isEqualTo(Demo.EXIT_INVALID);
    assertThat(err.text()).contains("either --master or --kubeconfig, not both");
  }

  @Test
  void aKubeconfigUnderTheHomeDirectoryIsFoundWithoutAShellAndAMissingOneIsNamed() {
    Path expanded = Path.of(System.getProperty("user.home"), "no-such-dir", "kubeconfig");

    assertThat(demo("--kubeconfig", "~/no-such-dir/kubeconfig")).isEqualTo(Demo.EXIT_INVALID);
    assertThat(err.text()).contains("--kubeconfig=\"" + expanded + "\" is not valid: accepted values are a "
        + "readable kubeconfig file");
  }

  @Test
  void helpPrintsTheUsageAndExitsZero() {
    assertThat(demo("--help")).isEqualTo(Demo.EXIT_OK);
    assertThat(out.text()).startsWith("usage: demo ").contains("--kill-switch").contains("exit status: 0");
  }
}
