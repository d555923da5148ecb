package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How soon a sharded replica's list and watch of the controller's Leases lists and watches again after it fails: on
 * the runner's own timings (fabric8's back-off from a 32nd of the retry period, doubling up to the retry period), not
 * on the watch reconnect interval of the user's client, which fabric8's informers and watches take from their client
 * (its Config for the informer's list again, its request settings for a watch's reconnect) and which a user may have
 * tuned for watches of their own. Over the real fabric8 client and informer against the mock API server.
 */
class ShardViewBackoffTest {

  /** The User-Agent of the user's client with the long reconnect interval, so the server can tell its requests. */
  private static final String SLOW = "slow-watches";
  /** The user's own watch reconnect interval: a minute, as tuned for watches of their own. */
  private static final int USERS_RECONNECT_MILLIS = 60_000;

  /** While set, each watch of the controller's Leases from {@link #SLOW} is opened, then ended with a 410 Gone. */
  private final AtomicBoolean watchesGone = new AtomicBoolean();
  private final AtomicInteger goneAnswered = new AtomicInteger();
  /** When each of those watches was answered, on {@link System#nanoTime}. */
  private final List<Long> goneAt = new CopyOnWriteArrayList<>();

  @RegisterExtension
  final MockApi api = new MockApi(this::endingWatchesWithGone);

  private final List<ShardedRunner> runners = new ArrayList<>();
  private final Map<Integer, String> running = new ConcurrentHashMap<>();
  private final List<String> overlaps = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeAll() {
    watchesGone.set(false);
    runners.forEach(ShardedRunner::close);
  }

  /**
   * A watch ended by the server with an ERROR event carrying a 410 Gone, as kube-apiserver ends one whose
   * resourceVersion was compacted away: fabric8's informer then lists again, after its back-off.
   */
  private Dispatcher endingWatchesWithGone(Dispatcher delegate) {
    return new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        String agent = request.getHeader("User-Agent");
        if (watchesGone.get() && "GET".equals(request.getMethod()) && path.contains("labelSelector")
            && path.contains("watch=true") && agent != null && agent.contains(SLOW)) {
          goneAt.add(System.nanoTime());
          goneAnswered.incrementAndGet();
          return new MockResponse().withWebSocketUpgrade(new WebSocketListener() {
            @Override
            public void onOpen(WebSocket webSocket, Response response) {
              webSocket.send("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                  + "\"status\":\"Failure\",\"reason\":\"Expired\",\"message\":\"too old resource version\","
                  + "\"code\":410}}");
              webSocket.close(1000, "gone");
            }
          });
        }
        return delegate.dispatch(request);
      }
    };
  }

  private void started(int shard, String identity) {
    String before = running.putIfAbsent(shard, identity);
    if (before != null) {
      overlaps.add("shard " + shard + " started in " + identity + " while running in " + before);
    }
  }

  /**
   * A replica with the fast settings' 200 ms retry period (the view's back-off is a 32nd of it, doubling up to it),
   * but a lease duration and renew deadline a loaded machine keeps: with the fast 2 s and 1.5 s (750 ms request
   * timeout), a starved JVM (load average 15-25 on 2 cores) missed renewals, so pod-a was found not ready after the
   * hand-over (its health budget, lease duration plus renew deadline, passed without a successful Lease call) or did
   * not own every shard within 15 s; neither is what this test is about.
   */
  private ShardedRunner replica(String identity, KubernetesClient client) {
    ShardedRunner runner = ShardedRunner.builder()
        .client(client)
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings(identity).leaseDuration(Duration.ofSeconds(10))
            .renewDeadline(Duration.ofSeconds(6)).build())
        .shards(4)
        .service(ShardService.of((shard, term) -> started(shard, identity), shard -> running.remove(shard, identity)))
        .start();
    runners.add(runner);
    return runner;
  }

  /**
   * The user's client waits a minute before each watch reconnect; the replica's list and watch is cut (every
   * connection dropped), and from then on each watch it opens is ended at once with a 410 Gone, until a replica that
   * joined meanwhile is listed. The replica still lists and watches again within its retry period each time (not a
   * minute on), so it sees the joiner through a list and hands it its share.
   */
  @Test
  void aReplicaThatJoinsWhileTheListAndWatchKeepsFailingGetsItsShareWhateverTheUsersReconnectInterval() {
    ReplicaLink link = api.fixture.replica("pod-a");
    KubernetesClient slow = api.client(link.url(), config -> config
        .withWatchReconnectInterval(USERS_RECONNECT_MILLIS).withUserAgent(SLOW));
    ShardedRunner a = replica("pod-a", slow);
    Await.until("pod-a owns every shard", () -> a.ownedShards().size() == 4 && running.size() == 4
        && a.health().ready(), Duration.ofSeconds(15), a::toString);

    watchesGone.set(true);
    long cut = System.nanoTime();
    link.refuseConnections(); // drops pod-a's connections, its watch among them
    link.heal();
    // Each watch ended by a 410 is followed by a list and a new watch after the back-off (at most the retry period,
    // 200 ms here); with the user's interval the first reconnect alone would wait a minute.
    Await.until("pod-a's list and watch watched again twice", () -> goneAnswered.get() >= 2,
        Duration.ofSeconds(10), () -> "watches ended with 410: " + goneAnswered + ", " + a);

    ShardedRunner b = replica("pod-b", api.client());
    Await.until("pod-b's membership Lease", () -> api.fixture.lease(MockApi.LEASE + "-member-pod-b").isPresent(),
        Duration.ofSeconds(15), b::toString);
    long joined = System.nanoTime();
    int before = goneAnswered.get();
    // A watch opened after pod-b's Lease was there, so a list after it has it too; then the watches stay open.
    Await.until("pod-a's list and watch watched again after pod-b joined", () -> goneAnswered.get() >= before + 1,
        Duration.ofSeconds(10), () -> "watches ended with 410: " + goneAnswered + ", " + a);
    watchesGone.set(false);

    Await.until("two shards each", () -> a.ownedShards().size() == 2 && b.ownedShards().size() == 2
        && running.size() == 4, Duration.ofSeconds(15), () -> a + " " + b + ", running " + running);
    long shared = System.nanoTime();
    assertThat(overlaps).isEmpty();
    assertThat(a.health().ready()).isTrue();
    List<Long> gaps = new ArrayList<>();
    for (int i = 1; i < goneAt.size(); i++) {
      gaps.add((goneAt.get(i) - goneAt.get(i - 1)) / 1_000_000);
    }
    System.out.printf("MEASURED shard view back-off: cut to first watch again %d ms, %d watches ended with 410, "
        + "ms between them %s, joiner's membership Lease to two shards each %d ms%n",
        (goneAt.get(0) - cut) / 1_000_000, goneAt.size(), gaps, (shared - joined) / 1_000_000);
  }
}
