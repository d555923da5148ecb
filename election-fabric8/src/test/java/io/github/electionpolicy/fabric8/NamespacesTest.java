package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.InvalidElectionSettingException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NamespacesTest {

  @TempDir
  Path dir;

  private LeaseSettings.Builder settings() {
    return LeaseSettings.builder().leaseName("orders-controller").identity("a")
        .serviceAccountNamespaceFile(dir.resolve("namespace"));
  }

  @Test
  void explicitNamespaceWins() throws Exception {
    Files.writeString(dir.resolve("namespace"), "from-file\n");

    assertThat(Namespaces.resolve(settings().namespace("explicit").build(), "from-client")).isEqualTo("explicit");
  }

  @Test
  void serviceAccountFileComesNext() throws Exception {
    Files.writeString(dir.resolve("namespace"), "from-file\n");

    assertThat(Namespaces.resolve(settings().build(), "from-client")).isEqualTo("from-file");
  }

  @Test
  void clientNamespaceIsTheLastResort() {
    assertThat(Namespaces.resolve(settings().build(), "from-client")).isEqualTo("from-client");
  }

  @Test
  void noNamespaceAnywhereIsAClearError() {
    assertThatThrownBy(() -> Namespaces.resolve(settings().build(), null))
        .isInstanceOfSatisfying(InvalidElectionSettingException.class,
            e -> assertThat(e.setting()).isEqualTo("namespace"))
        .hasMessageContaining(dir.resolve("namespace").toString())
        .hasMessageContaining("fix: call LeaseSettings.builder().namespace(...)");
  }
}
