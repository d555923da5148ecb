package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.Objects;

/**
 * The one list and watch of a sharded controller's Leases (those labelled {@link ShardLeases#LABEL}{@code =}{@link
 * ShardLeases#labelValue()} in one namespace), through a fabric8 informer: it lists, watches, lists again after a
 * watch it cannot resume or any failure (until closed, after a back-off capped at the retry period) and reports only
 * what changed, which is what {@link ShardLeaseView} takes in. Each Lease is reported with the time it arrived, on
 * the driver's {@link Ticker}, from the informer's own thread; the sink hands it to the driver's loop.
 *
 * <p>Thread-safe: {@link #close} may be called from any thread, once or more.
 */
final class ShardLeaseSource implements AutoCloseable {

  /** Where the Leases go, called on the informer's thread, one event at a time. */
  interface Sink {
    /** The Lease was added or changed; it arrived at {@code arrivedNanos}. */
    void changed(ShardLeaseView.Listed listed, long arrivedNanos);

    /** The Lease {@code name} was deleted; the deletion arrived at {@code arrivedNanos}. */
    void deleted(String name, long arrivedNanos);

    /** The first list was reported in full. */
    default void synced() {}
  }

  /** The ERROR of a replica whose list and watch did not list the Leases in time: label, value, milliseconds. */
  static final String NOT_LISTED = "The list and watch of the Leases labelled {}={} has not listed them after {} ms: "
      + "this replica owns no shard until it does, and is not ready; check that its account may list and watch leases "
      + "in the namespace (docs/sharding.md)";

  /** How many times the first interval of the back-off its cap is: fabric8's, 2^5, for informers and watches. */
  static final int BACKOFF_CAP_FACTOR = 32;

  private final SharedIndexInformer<Lease> informer;
  private final KubernetesClient client;
  private final java.util.concurrent.atomic.AtomicBoolean closed;

  private ShardLeaseSource(SharedIndexInformer<Lease> informer, KubernetesClient client,
      java.util.concurrent.atomic.AtomicBoolean closed) {
    this.informer = informer;
    this.client = client;
    this.closed = closed;
  }

  /**
   * Starts the informer over the Leases of {@code leases} in {@code namespace}, through a client of its own over
   * {@code userClient} ({@link DerivedClients#forInformer}) whose back-off after a failure is capped at {@code
   * retryPeriod}; returns at once, without waiting for the first list.
   */
  static ShardLeaseSource open(KubernetesClient userClient, String namespace, ShardLeases leases,
      java.time.Duration retryPeriod, Ticker ticker, Sink sink) {
    Objects.requireNonNull(sink, "sink");
    Objects.requireNonNull(ticker, "ticker");
    // The view is stale while the list and watch is down (no joiner seen, so no hand-over to it; no release seen):
    // its back-off is the runner's, not the one the user's client has for its own watches (fabric8's default starts
    // at 1 s and doubles to 32 s; a user may have tuned it longer). From a 32nd of the retry period, doubling, it
    // reaches the retry period after five failures in a row and stays there: a server that is down gets a list or a
    // watch from each replica once a retry period, as often as each Lease the replica holds gets a renewal.
    KubernetesClient client = DerivedClients.forInformer(userClient, reconnectMillis(retryPeriod));
    try {
      return open(client, namespace, leases, ticker, sink);
    } catch (RuntimeException | Error e) {
      client.close();
      throw e;
    }
  }

  private static ShardLeaseSource open(KubernetesClient client, String namespace, ShardLeases leases, Ticker ticker,
      Sink sink) {
    SharedIndexInformer<Lease> informer = client.leases().inNamespace(namespace)
        .withLabel(ShardLeases.LABEL, leases.labelValue())
        .runnableInformer(0);
    // fabric8's default handler stops the informer for good on any failure before the first list and on any watch
    // error but a 410 Gone after it (a response cut mid-event, an event its model cannot take), and nothing would
    // start it again: the view would never change, every other replica's Leases would expire in it, and this replica,
    // counting itself the only member, would never hand a shard to one that joins. Until closed, it lists and watches
    // again after every failure, with the back-off above.
    java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
    informer.exceptionHandler((started, failure) -> !closed.get());
    informer.addEventHandler(new ResourceEventHandler<>() {
      @Override
      public void onAdd(Lease lease) {
        sink.changed(listed(lease), ticker.read());
      }

      @Override
      public void onUpdate(Lease before, Lease lease) {
        sink.changed(listed(lease), ticker.read());
      }

      @Override
      public void onDelete(Lease lease, boolean finalStateUnknown) {
        sink.deleted(lease.getMetadata().getName(), ticker.read());
      }
    });
    informer.start().thenRun(sink::synced);
    return new ShardLeaseSource(informer, client, closed);
  }

  /** The first interval of the back-off, in milliseconds: a 32nd of {@code retryPeriod}, at least 1. */
  static int reconnectMillis(java.time.Duration retryPeriod) {
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, retryPeriod.toMillis() / BACKOFF_CAP_FACTOR));
  }

  /** The client of its own the informer lists and watches through. */
  KubernetesClient client() {
    return client;
  }

  /** Whether the first list has been reported. */
  boolean synced() {
    return informer.hasSynced();
  }

  /** A Lease as the view takes it: its name, its record, whether it is marked as leaving, and whether it is bare. */
  static ShardLeaseView.Listed listed(Lease lease) {
    ObjectMeta metadata = lease.getMetadata();
    boolean leaving = metadata.getAnnotations() != null
        && "true".equals(metadata.getAnnotations().get(ShardLeases.LEAVING));
    return new ShardLeaseView.Listed(metadata.getName(), LeaseRecords.record(lease), leaving, bare(metadata));
  }

  /**
   * Whether a write built from the Lease's record alone keeps all of its metadata: a PUT replaces the object, so a
   * shard runner takes a Lease seen released without reading it first only when it carries no annotation, owner
   * reference, finalizer or label but {@link ShardLeases#LABEL} (the fields the server sets, its uid and times, the
   * server keeps).
   */
  private static boolean bare(ObjectMeta metadata) {
    return isEmpty(metadata.getAnnotations()) && isEmpty(metadata.getOwnerReferences())
        && isEmpty(metadata.getFinalizers())
        && (metadata.getLabels() == null || ShardLeases.LABEL_ONLY.containsAll(metadata.getLabels().keySet()));
  }

  private static boolean isEmpty(java.util.Map<?, ?> map) {
    return map == null || map.isEmpty();
  }

  private static boolean isEmpty(java.util.Collection<?> collection) {
    return collection == null || collection.isEmpty();
  }

  @Override
  public void close() {
    closed.set(true);
    try {
      informer.close();
    } finally {
      client.close(); // its own: the user's client and HTTP client stay open
    }
  }
}
