package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How {@code -Delection.it.kubeconfig} chooses between the embedded and a real API server. */
class ApiServerTargetTest {

  @TempDir
  Path dir;

  @Test
  void withoutThePropertyTheLeaseApiIsEmbedded() {
    assertThat(ApiServerTarget.fromProperties(name -> null)).isEqualTo(ApiServerTarget.embedded());
  }

  @Test
  void aKubeconfigFileSelectsARealServer() throws IOException {
    Path kubeconfig = Files.writeString(dir.resolve("config"), "apiVersion: v1\n");

    assertThat(ApiServerTarget.fromProperties(Map.of(ApiServerTarget.KUBECONFIG_PROPERTY, kubeconfig.toString())::get))
        .isEqualTo(ApiServerTarget.kubeconfig(kubeconfig));
  }

  @Test
  void aBlankPropertyIsRejectedNamingTheProperty() {
    assertThatThrownBy(() -> ApiServerTarget.fromProperties(Map.of(ApiServerTarget.KUBECONFIG_PROPERTY, " ")::get))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("election.it.kubeconfig=\" \" is not valid")
        .hasMessageContaining("fix:");
  }

  @Test
  void aMissingFileIsRejectedNamingThePath() {
    String missing = dir.resolve("no-such-config").toString();

    assertThatThrownBy(() -> ApiServerTarget.fromProperties(Map.of(ApiServerTarget.KUBECONFIG_PROPERTY, missing)::get))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("election.it.kubeconfig=" + missing + " is not valid: no readable file");
  }

  @Test
  void aNamespaceThatIsNoDnsLabelIsRejectedNamingTheValue() {
    assertThatThrownBy(() -> LeaseApi.builder().namespace("Team_Orders"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("namespace=\"Team_Orders\" is not valid: accepted values are DNS labels");
  }
}
