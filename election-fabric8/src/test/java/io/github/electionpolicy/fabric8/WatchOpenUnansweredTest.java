package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.github.electionpolicy.testsupport.Await;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A follower's watch whose open the server never answers (it accepts the connection and sends nothing: a stuck
 * API server, a proxy that holds the upgrade), from the adversarial review h-attack7.
 */
class WatchOpenUnansweredTest {

  /**
   * FINDING 3 (h-attack7). A watch opened with fabric8's {@code submitWatch} holds its place among the JVM's Lease
   * calls until the future of the open completes (LeaseWatch.openWithoutWaiting), and nothing else gives it back:
   * not the watch's cancel, not the transport's close. fabric8 puts no request timeout on a watch's request (it
   * streams), so a server that accepts the connection and never answers leaves the future pending for ever, and
   * with it the place, after the runner closed. Each follower period of each runner opens a new watch (the elector
   * cancels the old one when it leads or stops), so a server that hangs watch requests takes the JVM's {@value
   * SharedPools#IO_MAX_CALLS} places one by one, and then every runner's reads and renewals are refused. Here the
   * watch is cancelled and its transport closed; its place is never given back (run once with a 90 s wait: still
   * held).
   *
   * <p>With the bound per runner of finding 1 it would hold only that runner's places, and then refuse that
   * runner's own reads and renewals after {@value SharedPools#ELECTION_MAX_CALLS} follower periods. Fixed: the
   * cancel gives the place back (a watch that opens later is closed then, as before).
   */
  @Test
  void aWatchWhoseOpenIsNeverAnsweredGivesItsPlaceBackOnceCancelledAndClosed() throws Exception {
    List<Socket> accepted = new CopyOnWriteArrayList<>();
    try (ServerSocket silent = new ServerSocket(0)) {
      Thread acceptor = new Thread(() -> {
        while (!silent.isClosed()) {
          try {
            accepted.add(silent.accept()); // and never a byte back
          } catch (java.io.IOException closed) {
            return;
          }
        }
      }, "silent-server");
      acceptor.setDaemon(true);
      acceptor.start();
      SharedPools.InFlight requests = new SharedPools.InFlight(SharedPools.IO_MAX_CALLS, "Lease calls");
      Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + silent.getLocalPort())
          .withNamespace(MockApi.NAMESPACE).build();
      LeaseSettings settings = MockApi.fastSettings("a").build();
      try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
          .withHttpClientFactory(new JdkHttpClientFactory()).build()) {
        Fabric8LeaseTransport transport = new Fabric8LeaseTransport(client, MockApi.NAMESPACE, settings,
            SharedPools.io(), SharedPools.handOver(), requests,
            new SharedPools.InFlight(SharedPools.EVENTS_MAX_CALLS, "leadership Event writes"));
        WatchOpenTest.Events events = new WatchOpenTest.Events();
        LeaseTransport.Call watch = transport.watch(events);
        assertThat(Await.holds(() -> !accepted.isEmpty(), Duration.ofSeconds(20)))
            .as("the watch's request reached the server").isTrue();
        watch.cancel();
        transport.close();
        // Several request timeouts: a Lease request's place is back by then, whatever the server does.
        assertThat(Await.holds(() -> requests.inFlight() == 0, settings.requestTimeout().multipliedBy(4)
            .plusSeconds(5))).as("the place of the cancelled watch, after its transport closed").isTrue();
      } finally {
        for (Socket socket : accepted) {
          socket.close();
        }
      }
    }
  }
}
