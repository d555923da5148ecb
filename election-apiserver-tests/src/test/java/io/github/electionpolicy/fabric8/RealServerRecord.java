package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import java.time.Duration;
import java.util.List;

/**
 * The fixture's record of a Lease's writes, read once it is complete up to the Lease as the server holds it now.
 *
 * <p>Against a real server the fixture learns of writes from a watch, which delivers a write a few milliseconds
 * after the server answered the writer (through the API server's watch cache, and the fixture's own client), and
 * on a loaded machine sometimes only after the writer went on to start its services: a {@code START} in the
 * service log does not mean the record holds the write that won that term yet. So this reads the Lease (its
 * resourceVersion is that of the newest write the server stored before the read: at least that of every write a
 * test has waited for) and waits until the watch, which delivers the writes of a Lease in the order of their
 * versions, has delivered that one; the record then holds every write up to it.
 */
final class RealServerRecord {

  private RealServerRecord() {}

  static List<LeaseWrite> upToNow(LeaseApi api, String lease) throws InterruptedException {
    long version = Long.parseLong(api.lease(lease).orElseThrow().getMetadata().getResourceVersion());
    assertThat(Replica.awaitTrue(() -> api.leaseWrites(lease).stream().anyMatch(w -> w.resourceVersion() >= version),
        Duration.ofSeconds(10)))
        .as("the fixture's watch delivered the write of resourceVersion %d of Lease %s; the record: %s", version,
            lease, describe(api.leaseWrites(lease)))
        .isTrue();
    return api.leaseWrites(lease);
  }

  /**
   * Waits until the record holds {@code count} more writes of Lease {@code lease} that leave {@code holder} in it
   * than it held when called: the server's evidence that {@code holder} led through {@code count} more retry
   * periods, which a test that shows that something does not happen meanwhile waits for instead of sleeping.
   *
   * @return whether they came in time (three retry periods each, plus ten seconds)
   */
  static boolean awaitWrites(LeaseApi api, String lease, String holder, int count) throws InterruptedException {
    long before = writesBy(api, lease, holder);
    return Replica.awaitTrue(() -> writesBy(api, lease, holder) >= before + count,
        MockApi.RETRY_PERIOD.multipliedBy(3L * count).plusSeconds(10));
  }

  private static long writesBy(LeaseApi api, String lease, String holder) {
    return api.leaseWrites(lease).stream().filter(w -> w.holder().equals(holder)).count();
  }

  /** The record as {@code holder@resourceVersion}, for messages ({@code @} alone: released). */
  static List<String> describe(List<LeaseWrite> writes) {
    return writes.stream().map(w -> w.holder() + "@" + w.resourceVersion()).toList();
  }
}
