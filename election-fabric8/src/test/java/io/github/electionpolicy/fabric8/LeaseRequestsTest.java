package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Lease calls go out with the user's own request settings, except timeouts and retries. */
class LeaseRequestsTest {

  private static final String USER = "system:serviceaccount:shop:orders-controller";

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void leaseRequestsImpersonateTheUserThatTheClientImpersonates() throws Exception {
    Config config = new ConfigBuilder(Config.empty())
        .withMasterUrl(api.proxy().url())
        .withNamespace(MockApi.NAMESPACE)
        .withImpersonateUsername(USER)
        .build();
    try (KubernetesClient impersonating = new KubernetesClientBuilder().withConfig(config)
            .withHttpClientFactory(new JdkHttpClientFactory()).build();
        Replica a = Replica.start("a", impersonating, MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();

      List<RecordedRequest> leaseRequests = new ArrayList<>();
      RecordedRequest request;
      while ((request = api.server.takeRequest(200, TimeUnit.MILLISECONDS)) != null) {
        if (request.getPath().contains("/leases")) {
          leaseRequests.add(request);
        }
      }

      assertThat(leaseRequests).isNotEmpty()
          .allSatisfy(lease -> assertThat(lease.getHeader("Impersonate-User")).isEqualTo(USER));
    }
  }
}
