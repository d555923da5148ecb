package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.InvalidElectionSettingException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LeaseNamespaceTest {

  @TempDir
  Path dir;

  private LeaseSettings.Builder settings() {
    return LeaseSettings.builder().leaseName("orders-controller").identity("a")
        .serviceAccountNamespaceFile(dir.resolve("namespace"));
  }

  @Test
  void explicitNamespaceWins() throws Exception {
    Files.writeString(dir.resolve("namespace"), "from-file\n");

    assertThat(LeaseNamespace.resolve(settings().namespace("explicit").build(), "from-client"))
        .isEqualTo(new LeaseNamespace("explicit", LeaseNamespace.Source.EXPLICIT));
  }

  @Test
  void serviceAccountFileComesNext() throws Exception {
    Files.writeString(dir.resolve("namespace"), "from-file\n");

    assertThat(LeaseNamespace.resolve(settings().build(), "from-client"))
        .isEqualTo(new LeaseNamespace("from-file", LeaseNamespace.Source.SERVICE_ACCOUNT_FILE));
  }

  @Test
  void clientNamespaceIsTheLastResort() {
    assertThat(LeaseNamespace.resolve(settings().build(), " from-client "))
        .isEqualTo(new LeaseNamespace("from-client", LeaseNamespace.Source.CLIENT_CONFIGURATION));
  }

  @Test
  void noNamespaceAnywhereIsAClearError() {
    assertThatThrownBy(() -> LeaseNamespace.resolve(settings().build(), null))
        .isInstanceOfSatisfying(InvalidElectionSettingException.class,
            e -> assertThat(e.setting()).isEqualTo("namespace"))
        .hasMessageContaining(dir.resolve("namespace").toString())
        .hasMessageContaining("fix: call LeaseSettings.builder().namespace(...)");
  }
}
