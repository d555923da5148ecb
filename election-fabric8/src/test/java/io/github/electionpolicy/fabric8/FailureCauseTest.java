package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Lease-loop warnings name the cause: fabric8's "HTTP -1 ... failed." hides it. */
class FailureCauseTest {

  @RegisterExtension
  final MockApi api = new MockApi();

  private static KubernetesClientException wrapped(Throwable cause) {
    return new KubernetesClientException("Operation: [update]  for kind: [Lease]  failed.", -1, null) {
      private static final long serialVersionUID = 1L;

      @Override
      public synchronized Throwable getCause() {
        return cause;
      }
    };
  }

  @Test
  void aRefusedConnectionIsNamedNotHttpMinusOne() {
    assertThat(FailureCause.describe(wrapped(new IOException("x", new ConnectException("Connection refused")))))
        .isEqualTo("connection refused (Connection refused)");
  }

  @Test
  void dnsAndTimeoutsAreNamed() {
    assertThat(FailureCause.describe(wrapped(new UnknownHostException("api.example.invalid"))))
        .isEqualTo("DNS cannot resolve the API server's host (api.example.invalid)");
    assertThat(FailureCause.describe(wrapped(new SocketTimeoutException("Read timed out"))))
        .isEqualTo("timed out (Read timed out)");
  }

  @Test
  void aForbiddenAnswerSaysRbacAndTheMessage() {
    KubernetesClientException forbidden = new KubernetesClientException(
        "leases.coordination.k8s.io \"orders\" is forbidden: User \"x\" cannot update resource", 403, null);

    assertThat(FailureCause.describe(forbidden)).startsWith("HTTP 403 (forbidden: RBAC does not grant this verb")
        .contains("cannot update resource");
  }

  @Test
  void aRealClientAgainstAClosedPortReportsTheRefusedConnection() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    KubernetesClient client = api.client("http://127.0.0.1:" + closedPort + "/");
    LeaseSettings settings = MockApi.fastSettings("a").build();
    try (Fabric8LeaseTransport transport = new Fabric8LeaseTransport(client, MockApi.NAMESPACE, settings,
        SharedPools.io())) {
      java.util.concurrent.CompletableFuture<Throwable> failure = new java.util.concurrent.CompletableFuture<>();
      transport.read((answer, failed) -> failure.complete(failed));

      assertThat(failure.get(5, java.util.concurrent.TimeUnit.SECONDS)).isInstanceOf(LeaseCallFailed.class)
          .satisfies(failed -> assertThat(failed.getMessage()).startsWith("get Lease failed: connection refused")
              .doesNotContain("-1"));
    }
  }
}
