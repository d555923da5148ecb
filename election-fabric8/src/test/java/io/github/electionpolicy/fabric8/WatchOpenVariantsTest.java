package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What held in the review h-attack6 of the non-blocking watch open: a user client derived to impersonate opens
 * its watch (fabric8's {@code submitWatch}, on the hand-over thread) as that user. Over the real fabric8 client
 * and its mock API server. (A client for HTTP watches only, {@code onlyHttpWatches}, is not tested here: the mock
 * server does not serve HTTP watches, and fabric8 reconnects such a watch, after reporting it open, with either
 * open alike.)
 */
class WatchOpenVariantsTest {

  private static final Duration PATIENCE = Duration.ofSeconds(20);

  private static KubernetesClient client(MockApi server, boolean onlyHttpWatches) {
    Config config = new ConfigBuilder(Config.empty()).withMasterUrl(server.url()).withNamespace(MockApi.NAMESPACE)
        .build();
    config.setOnlyHttpWatches(onlyHttpWatches);
    return new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(new JdkHttpClientFactory())
        .build();
  }

  @Test
  void aWatchThroughAClientDerivedToImpersonateOpensAsThatUser() throws Exception {
    List<String> watches = new CopyOnWriteArrayList<>();
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.contains("watch=true")) {
          watches.add(String.valueOf(request.getHeader("Impersonate-User")));
        }
        return delegate.dispatch(request);
      }
    }).answeringAccessReviews()) {
      try (KubernetesClient base = client(server, false)) {
        KubernetesClient orders = base.newClient(new io.fabric8.kubernetes.client.RequestConfigBuilder(
            base.getConfiguration().getRequestConfig()).withImpersonateUsername("orders").build())
            .adapt(KubernetesClient.class);
        SharedPools.InFlight requests = new SharedPools.InFlight(64, "Lease calls");
        try (Fabric8LeaseTransport transport = new Fabric8LeaseTransport(orders, MockApi.NAMESPACE,
            MockApi.fastSettings("a").build(), SharedPools.io(), SharedPools.handOver(), requests,
            new SharedPools.InFlight(SharedPools.EVENTS_MAX_CALLS, "leadership Event writes"))) {
          WatchOpenTest.Events events = new WatchOpenTest.Events();
          LeaseTransport.Call watch = transport.watch(events);
          events.opened.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
          watch.cancel();
        }
      }
      assertThat(watches).isNotEmpty().allSatisfy(user -> assertThat(user).isEqualTo("orders"));
    }
  }
}
