package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.WebSocketListener;
import io.github.electionpolicy.testsupport.Await;
import io.github.electionpolicy.testsupport.LogCapture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A sharded replica whose watch of the controller's Leases opens but delivers nothing (a server or proxy that stopped
 * answering a connection fabric8 still counts as open, or a reconnect that never completed: fabric8 then neither
 * reports a failure nor tries again, and its informer counts itself as watching) still sees a replica that joins: its
 * view, silent for three retry periods or half a lease duration (the longer) although its own renewals change the
 * Leases it watches, is listed and watched again, so it hands the joiner its share. Over the real fabric8 client and informer against the mock API server.
 */
class ShardViewSilentWatchTest {

  /** The User-Agent of the client whose watches of the controller's Leases are silent. */
  private static final String SILENT = "silent-watches";

  private final AtomicInteger silentWatches = new AtomicInteger();
  private final AtomicInteger lists = new AtomicInteger();

  @RegisterExtension
  final MockApi api = new MockApi(this::silencingWatches);

  private final List<ShardedRunner> runners = new ArrayList<>();
  private final Map<Integer, String> running = new ConcurrentHashMap<>();
  private final List<String> overlaps = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeAll() {
    runners.forEach(ShardedRunner::close);
  }

  /** Each watch of the controller's Leases from {@link #SILENT} is opened, and then sends nothing and stays open. */
  private Dispatcher silencingWatches(Dispatcher delegate) {
    return new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        String agent = request.getHeader("User-Agent");
        boolean mine = "GET".equals(request.getMethod()) && path.contains("labelSelector") && agent != null
            && agent.contains(SILENT);
        if (mine && path.contains("watch=true")) {
          silentWatches.incrementAndGet();
          return new MockResponse().withWebSocketUpgrade(new WebSocketListener() { });
        }
        if (mine) {
          lists.incrementAndGet();
        }
        return delegate.dispatch(request);
      }
    };
  }

  private ShardedRunner replica(String identity, KubernetesClient client) {
    ShardedRunner runner = ShardedRunner.builder()
        .client(client)
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings(identity).build())
        .shards(4)
        .service(ShardService.of((shard, term) -> {
          String before = running.putIfAbsent(shard, identity);
          if (before != null) {
            overlaps.add("shard " + shard + " started in " + identity + " while running in " + before);
          }
        }, shard -> running.remove(shard, identity)))
        .start();
    runners.add(runner);
    return runner;
  }

  @Test
  void aReplicaWhoseWatchDeliversNothingStillSeesAJoinerAndHandsItItsShare() {
    KubernetesClient silent = api.client(api.fixture.replica("pod-a").url(), config -> config.withUserAgent(SILENT));
    try (LogCapture log = new LogCapture()) {
      ShardedRunner a = replica("pod-a", silent);
      Await.until("pod-a owns every shard", () -> a.ownedShards().size() == 4 && running.size() == 4,
          Duration.ofSeconds(15), a::toString);
      assertThat(silentWatches.get()).isPositive();

      ShardedRunner b = replica("pod-b", api.client());
      // pod-a learns of pod-b only from a list: its watches never deliver pod-b's membership Lease.
      Await.until("two shards each", () -> a.ownedShards().size() == 2 && b.ownedShards().size() == 2
          && running.size() == 4, Duration.ofSeconds(20), () -> a + " " + b + ", running " + running);
      assertThat(overlaps).isEmpty();
      assertThat(lists.get()).as("pod-a's lists: the first, and one per silence").isGreaterThan(1);
      // Fast settings: the longer of three retry periods (600 ms) and half the lease duration (1 s).
      assertThat(log.text()).contains("delivered nothing for 1000 ms");
    }
  }
}
