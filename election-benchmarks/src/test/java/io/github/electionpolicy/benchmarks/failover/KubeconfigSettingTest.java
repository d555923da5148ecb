package io.github.electionpolicy.benchmarks.failover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code kubeconfig} setting and the server mode it selects; no API server is contacted. */
class KubeconfigSettingTest {

  @TempDir
  Path dir;

  @Test
  void withoutKubeconfigTheRoundsRunOnTheMockWhichCountsRequestsAndRepeatsTimedOutRounds() {
    BenchmarkSettings settings = BenchmarkSettings.parse("timings=fast");

    assertThat(settings.kubeconfig()).isEmpty();
    assertThat(settings.serverMode()).isEqualTo(ServerMode.mock());
    assertThat(settings.serverMode().countsRequests()).isTrue();
    assertThat(settings.serverMode().repeatsTimedOutRounds()).isTrue();
  }

  @Test
  void aKubeconfigOfALoopbackServerSelectsTheRealServerWhichCountsNoRequestsAndRepeatsNoRound()
      throws IOException {
    Path file = kubeconfig("https://127.0.0.1:6443");

    BenchmarkSettings settings = BenchmarkSettings.parse("timings=fast", "kubeconfig=" + file);

    assertThat(settings.kubeconfig()).contains(file);
    assertThat(settings.serverMode()).isEqualTo(ServerMode.real(file));
    assertThat(settings.serverMode().countsRequests()).isFalse();
    assertThat(settings.serverMode().repeatsTimedOutRounds()).isFalse();
    assertThat(settings.serverMode()).hasToString("real API server from " + file);
  }

  @Test
  void localhostAndIpv6LoopbackAreAccepted() throws IOException {
    assertThat(BenchmarkSettings.parse("kubeconfig=" + kubeconfig("https://localhost:6443")).kubeconfig())
        .isPresent();
    assertThat(BenchmarkSettings.parse("kubeconfig=" + kubeconfig("https://[::1]:6443")).kubeconfig()).isPresent();
  }

  @Test
  void anEmptyKubeconfigNamesTheSettingAndWhatIsAccepted() {
    assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("kubeconfig="))
        .withMessageStartingWith("kubeconfig= is not valid: accepted values are the path of a readable kubeconfig")
        .withMessageContaining("fix: leave kubeconfig out to run on fabric8's mock API server");
  }

  @Test
  void aMissingFileIsRejectedNamingTheValue() {
    Path missing = dir.resolve("nope.kubeconfig");

    assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("kubeconfig=" + missing))
        .withMessageStartingWith("kubeconfig=" + missing + " is not valid: no readable file there")
        .withMessageContaining("accepted values are the path of a readable kubeconfig file")
        .withMessageContaining("tools/kube-apiserver/cluster.sh start DIR");
  }

  @Test
  void aFileThatIsNoKubeconfigIsRejected() throws IOException {
    Path file = Files.writeString(dir.resolve("notes.txt"), "this: [is not a kubeconfig\n");

    assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("kubeconfig=" + file))
        .withMessageStartingWith("kubeconfig=" + file + " is not valid: it cannot be read as a kubeconfig")
        .withMessageContaining("accepted values are");
  }

  @Test
  void aServerOffTheLoopbackInterfaceIsRejectedBecauseNoProxyCanCrashAReplica() throws IOException {
    Path file = kubeconfig("https://api.example.com:6443");

    assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("kubeconfig=" + file))
        .withMessageStartingWith("kubeconfig=" + file + " is not valid: its server https://api.example.com:6443/ is "
            + "not on a loopback address")
        .withMessageContaining("on a loopback address (127.0.0.1, ::1 or localhost)");
  }

  @Test
  void theUnknownKeyMessageListsKubeconfig() {
    assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("kubconfig=x"))
        .withMessageContaining("warmup, kubeconfig;");
  }

  private Path kubeconfig(String server) throws IOException {
    return Files.writeString(dir.resolve("k" + Math.abs(server.hashCode()) + ".kubeconfig"), """
        apiVersion: v1
        kind: Config
        clusters:
        - name: c
          cluster:
            server: %s
            insecure-skip-tls-verify: true
        users:
        - name: u
          user:
            token: not-a-real-token
        contexts:
        - name: ctx
          context:
            cluster: c
            user: u
            namespace: default
        current-context: ctx
        """.formatted(server));
  }
}
