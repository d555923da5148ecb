package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What held in the adversarial review h-attack7 of {@code LeaseWatch.Watching} (commit bb4d019): a watch cancelled
 * once open reports nothing after, and neither it nor its open keeps a place. Real fabric8 client, mock API server.
 */
class WatchCancelTest {

  private static final Duration PATIENCE = Duration.ofSeconds(20);

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  @Test
  void aWatchCancelledOnceOpenReportsNoLaterChangeAndHoldsNoPlace() throws Exception {
    SharedPools.InFlight requests = new SharedPools.InFlight(SharedPools.IO_MAX_CALLS, "Lease calls");
    api.client().leases().inNamespace(MockApi.NAMESPACE).resource(new io.fabric8.kubernetes.api.model.coordination
        .v1.LeaseBuilder()
        .withNewMetadata().withName(MockApi.LEASE).withNamespace(MockApi.NAMESPACE).endMetadata()
        .withNewSpec().withHolderIdentity("x").withLeaseDurationSeconds(3600).endSpec()
        .build()).create();
    try (Fabric8LeaseTransport transport = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
        MockApi.fastSettings("a").build(), SharedPools.io(), SharedPools.handOver(), requests,
        new SharedPools.InFlight(SharedPools.EVENTS_MAX_CALLS, "leadership Event writes"))) {
      WatchOpenTest.Events events = new WatchOpenTest.Events();
      LeaseTransport.Call watch = transport.watch(events);
      events.opened.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(Await.holds(() -> events.holders.contains("x"), PATIENCE)).isTrue();

      watch.cancel();
      watch.cancel();
      int seen = events.holders.size();
      api.takeLeaseAs("y");
      // A second watch, opened after the write, hears it: the first had as long to (wrongly) report it.
      WatchOpenTest.Events later = new WatchOpenTest.Events();
      LeaseTransport.Call second = transport.watch(later);
      assertThat(Await.holds(() -> later.holders.contains("y"), PATIENCE)).isTrue();
      second.cancel();
      CompletableFuture<LeaseStep.Answer> read = new CompletableFuture<>();
      transport.read((answer, failure) -> read.complete(answer));
      read.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);

      assertThat(events.holders).as("nothing reported after the cancel").hasSize(seen);
      assertThat(events.closed).as("a cancelled watch is not reported closed").isNotDone();
      assertThat(Await.holds(() -> requests.inFlight() == 0, PATIENCE)).as("no place kept").isTrue();
    }
  }
}
