package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The pace of a sharded replica's list and watch of the controller's Leases when the server ends every watch it
 * opens at once (a 410 Gone as its first event): fabric8's informer starts its back-off again from its first interval
 * after every list and watch that opened, so on its own it would list again every 32nd of the retry period for as long
 * as that lasts. Over the real fabric8 client and informer against the mock API server.
 */
class ShardViewRelistPaceTest {

  private static final Duration RETRY_PERIOD = Duration.ofSeconds(1);

  private final AtomicBoolean watchesGone = new AtomicBoolean(true);
  /** When each list of the controller's Leases reached the server, on {@link System#nanoTime}. */
  private final List<Long> listedAt = new CopyOnWriteArrayList<>();

  @RegisterExtension
  final MockApi api = new MockApi(delegate -> new Dispatcher() {
    @Override
    public MockResponse dispatch(RecordedRequest request) {
      String path = request.getPath() == null ? "" : request.getPath();
      if ("GET".equals(request.getMethod()) && path.contains("labelSelector")) {
        if (!path.contains("watch=true")) {
          listedAt.add(System.nanoTime());
        } else if (watchesGone.get()) {
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
      }
      return delegate.dispatch(request);
    }
  });

  private final ShardLeases leases = new ShardLeases("orders", 4);
  private final ShardLeaseSource.Sink sink = new ShardLeaseSource.Sink() {
    @Override
    public void changed(ShardLeaseView.Listed listed, long arrivedNanos) {}

    @Override
    public void deleted(String name, long arrivedNanos) {}
  };

  /**
   * Every watch is ended by the server as soon as it opened, each time after a list that succeeded: the lists and
   * watches come no more often than once a retry period once the back-off reached it (after five short-lived
   * rounds), not every 32nd of it. The bound is a lower one on the gaps: a loaded machine only makes them longer.
   */
  @Test
  void aServerThatEndsEveryWatchAtOnceGetsAListOncePerRetryPeriodNotEvery32ndOfIt() {
    try (ShardLeaseSource source = ShardLeaseSource.open(api.client(), MockApi.NAMESPACE, leases, RETRY_PERIOD,
        System::nanoTime, sink)) {
      Await.until("ten lists", () -> listedAt.size() >= 10, Duration.ofSeconds(30), listedAt::size);
      watchesGone.set(false);
    }
    List<Long> gaps = new ArrayList<>();
    for (int i = 1; i < listedAt.size(); i++) {
      gaps.add((listedAt.get(i) - listedAt.get(i - 1)) / 1_000_000);
    }
    System.out.println("MEASURED ms between lists while every watch ends at once: " + gaps);
    // Lists 1-6: the back-off doubling from a 32nd (31, 62, 125, 250, 500 ms); from the 7th on, the retry period.
    assertThat(gaps.subList(6, 9)).as("ms between lists 7 to 10").allSatisfy(gap -> assertThat(gap)
        .isGreaterThanOrEqualTo(RETRY_PERIOD.toMillis() * 3 / 4));
  }
}
