package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The one list and watch of a sharded controller's Leases (those labelled {@link ShardLeases#LABEL}{@code =}{@link
 * ShardLeases#labelValue()} in one namespace), through a fabric8 informer: it lists, watches, lists again after a
 * watch it cannot resume or any failure (until closed, after a back-off capped at the retry period) and reports only
 * what changed, which is what {@link ShardLeaseView} takes in. Each Lease is reported with the time it arrived, on
 * the driver's {@link Ticker}, from the informer's own thread; the sink hands it to the driver's loop. Each failure
 * is reported too ({@link Sink#failed}), a list fabric8 makes on its own after a 410 Gone included (see {@link
 * #report}), and {@link #relist} cuts a back-off short: the informer is replaced by one
 * that starts from the Leases as last reported and lists at once, reporting what changed since (deletions included),
 * and nothing more is reported from the one replaced, which is stopped from a worker (see {@link #relist}), and by
 * {@link #close} at the latest.
 *
 * <p>Thread-safe: {@link #close} may be called from any thread, once or more; {@link #relist} from any thread.
 */
final class ShardLeaseSource implements ShardViewSource.View {

  /** Where the Leases go, called on the informer's thread, one event at a time. */
  interface Sink {
    /** The Lease was added or changed; it arrived at {@code arrivedNanos}. */
    void changed(ShardLeaseView.Listed listed, long arrivedNanos);

    /** The Lease {@code name} was deleted; the deletion arrived at {@code arrivedNanos}. */
    void deleted(String name, long arrivedNanos);

    /**
     * A list was reported in full: the first, or the first of a list and watch opened again by {@link
     * ShardViewSource.View#relist}.
     */
    default void listed() {}

    /**
     * As {@link #listed()}, naming the list and watch that listed: the source's {@link ShardViewSource.View#generation}
     * then. A sink that hands it on to be taken in later ignores it if the source has been listed and watched again
     * since (a relist or restart replaced it meanwhile): the list that counts is the new one's.
     */
    default void listed(int generation) {
      listed();
    }

    /** The list or the watch failed: it lists and watches again after its back-off, or at a relist. */
    default void failed() {}
  }

  /** The ERROR of a replica whose list and watch did not list the Leases in time: label, value, milliseconds. */
  static final String NOT_LISTED = "The list and watch of the Leases labelled {}={} has not listed them after {} ms: "
      + "this replica owns no shard until it does, and is not ready; check that its account may list and watch leases "
      + "in the namespace (docs/sharding.md)";

  /** How many times the first interval of the back-off its cap is: fabric8's, 2^5, for informers and watches. */
  static final int BACKOFF_CAP_FACTOR = 32;

  private final KubernetesClient client;
  // The pace of the client's lists (DerivedClients.forInformer), restarted by a relist.
  private final ListPace pace;
  private final String namespace;
  private final ShardLeases leases;
  private final Ticker ticker;
  private final Sink sink;
  // Where a replaced informer is stopped: never on the thread of relist(), the runners' loop (see relist).
  private final java.util.concurrent.Executor stopper;
  // The informers replaced and not yet stopped (by the stopper, or by close at the latest).
  private final java.util.Set<SharedIndexInformer<Lease>> stopping =
      java.util.concurrent.ConcurrentHashMap.newKeySet();
  private volatile boolean closed;
  // Guarded by this: the informer whose events are reported (its generation: one replaced reports nothing more),
  // whether any list was reported, and each Lease as last reported, which a relist's informer starts from so that it
  // reports exactly what changed since.
  private SharedIndexInformer<Lease> informer;
  private int generation;
  private boolean listedOnce;
  // Whether the current informer's own list was reported in full, and whether a list it then made on its own (after a
  // 410 Gone, see report) was reported as a failure since it last reported a change while watching.
  private boolean currentListed;
  private boolean ownListReported;
  private final Map<String, Lease> reported = new HashMap<>();
  // The Leases of the current informer's list not yet reported as listed (their events still on their way to the
  // handler: see startInformer), or null once its list was reported in full, or before it listed.
  private java.util.Set<String> unreported;

  private ShardLeaseSource(KubernetesClient client, ListPace pace, String namespace, ShardLeases leases, Ticker ticker,
      Sink sink, java.util.concurrent.Executor stopper) {
    this.stopper = stopper;
    this.client = client;
    this.pace = pace;
    this.namespace = namespace;
    this.leases = leases;
    this.ticker = ticker;
    this.sink = sink;
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
    ListPace pace = ListPace.forInformer(reconnectMillis(retryPeriod));
    KubernetesClient client = DerivedClients.forInformer(userClient, reconnectMillis(retryPeriod), pace);
    try {
      ShardLeaseSource source = new ShardLeaseSource(client, pace, namespace, leases, ticker, sink,
          SharedPools.handOver());
      synchronized (source) {
        source.startInformer();
      }
      return source;
    } catch (RuntimeException | Error e) {
      client.close();
      throw e;
    }
  }

  /** A new informer, started from the Leases as last reported, whose events are now the ones reported. */
  private void startInformer() {
    int mine = ++generation;
    SharedIndexInformer<Lease> next = client.leases().inNamespace(namespace)
        .withLabel(ShardLeases.LABEL, leases.labelValue())
        .runnableInformer(0);
    if (!reported.isEmpty()) {
      // Its first list then reports only what changed since (an update of a newer resourceVersion, a deletion).
      next.initialState(new java.util.ArrayList<>(reported.values()).stream());
    }
    // fabric8's default handler stops the informer for good on any failure before the first list and on any watch
    // error but a 410 Gone after it (a response cut mid-event, an event its model cannot take), and nothing would
    // start it again: the view would never change, every other replica's Leases would expire in it, and this replica,
    // counting itself the only member, would never hand a shard to one that joins. Until closed, it lists and watches
    // again after every failure, with the back-off above, and the sink hears of each failure.
    next.exceptionHandler((started, failure) -> failed(mine));
    next.addEventHandler(new ResourceEventHandler<>() {
      @Override
      public void onAdd(Lease lease) {
        report(mine, () -> changed(lease));
      }

      @Override
      public void onUpdate(Lease before, Lease lease) {
        report(mine, () -> changed(lease));
      }

      @Override
      public void onDelete(Lease lease, boolean finalStateUnknown) {
        report(mine, () -> {
          reported.remove(lease.getMetadata().getName());
          sink.deleted(lease.getMetadata().getName(), ticker.read());
          reported(lease.getMetadata().getName());
        });
      }
    });
    informer = next;
    unreported = null;
    currentListed = false;
    ownListReported = false;
    // The informer's start completes once it has listed, but fabric8 hands each listed Lease to the handler on an
    // executor of its own, so some may not have been reported yet: the list counts as reported (listed()) once every
    // Lease its store holds then was, each through its own event, in their order, so that the view never takes in a
    // part of a list as the whole (a joining replica would plan from it: every shard whose Lease is listed later seen
    // free, every member listed later seen gone).
    next.start().thenRun(() -> report(mine, () -> {
      unreported = new java.util.HashSet<>();
      for (Lease lease : next.getStore().list()) {
        Lease last = reported.get(lease.getMetadata().getName());
        if (last == null || !Objects.equals(last.getMetadata().getResourceVersion(),
            lease.getMetadata().getResourceVersion())) {
          unreported.add(lease.getMetadata().getName());
        }
      }
      reportedListed();
    }));
  }

  private void changed(Lease lease) {
    reported.put(lease.getMetadata().getName(), lease);
    sink.changed(listed(lease), ticker.read());
    reported(lease.getMetadata().getName());
  }

  /** The Lease {@code name} was reported: the list is reported in full once none of its Leases is left. */
  private void reported(String name) {
    if (unreported != null && unreported.remove(name)) {
      reportedListed();
    }
  }

  private void reportedListed() {
    if (unreported != null && unreported.isEmpty()) {
      unreported = null;
      listedOnce = true;
      currentListed = true;
      sink.listed(generation);
    }
  }

  /** A failure of the informer of generation {@code of}: whether it tries again (not once replaced or closed). */
  private synchronized boolean failed(int of) {
    if (of != generation || closed) {
      return false;
    }
    sink.failed();
    return true;
  }

  /**
   * Reports a change of the informer of generation {@code of}, unless it was replaced or the source closed.
   *
   * <p>fabric8's informer also lists again on its own, after a 410 Gone ends its watch (kube-apiserver's answer to a
   * watch whose resourceVersion was compacted away), and reports no failure for it: it hands what changed since its
   * last state to the handler as plain changes, the deletions last, and watches again only once it handed them all
   * (fabric8 7.6 and 8.0, {@code Reflector.listSyncAndWatch}). A view taking them in one by one holds, meanwhile,
   * Leases of two moments (a member that left still listed, say), which is what {@link Sink#failed} tells it: so a
   * change of the current informer that arrives while it does not watch, once its own list was reported, is preceded
   * by a failure, once for each such list. (A watch event still on its way when its watch ended counts as one too:
   * one list more.)
   */
  private synchronized void report(int of, Runnable report) {
    if (of == generation && !closed) {
      if (!currentListed || informer.isWatching()) {
        ownListReported = false;
      } else if (!ownListReported) {
        ownListReported = true;
        sink.failed();
      }
      report.run();
    }
  }

  /**
   * Lists and watches again at once if the informer is not watching (it failed and waits for its back-off, or lists
   * again on its own): through a new informer that starts from the Leases as last reported, the old one stopped
   * from a worker, and by {@link #close} at the latest. Not on this thread, the runners' loop: fabric8's {@code
   * stop()} takes the informer's reflector's monitor, which the reflector holds while it opens a watch, through the
   * user's interceptors (a token refresh, a credential plugin); a relist that replaced an informer opening its watch
   * after a list of its own would hold the loop that long. Returns whether it did; not after {@link #close}.
   */
  @Override
  public synchronized int generation() {
    return generation;
  }

  @Override
  public boolean relist() {
    return replace(false);
  }

  /** As {@link #relist}, whether or not the informer counts itself as watching (see {@link ShardViewFeed#checkSilence}). */
  @Override
  public boolean restart() {
    return replace(true);
  }

  private boolean replace(boolean evenIfWatching) {
    SharedIndexInformer<Lease> replaced;
    synchronized (this) {
      if (closed || (!evenIfWatching && informer.isWatching())) {
        return false;
      }
      replaced = informer;
      stopping.add(replaced);
      pace.restart(); // the new informer's list goes out now, not at the pace the failures before it built up
      startInformer();
    }
    // Outside the lock (its threads may be reporting, and find it replaced), and off this thread.
    try {
      stopper.execute(() -> stop(replaced));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      stop(replaced);
    }
    return true;
  }

  /** Stops an informer replaced by a relist (fabric8's {@code stop()} may be called more than once). */
  private void stop(SharedIndexInformer<Lease> replaced) {
    try {
      replaced.stop();
    } finally {
      stopping.remove(replaced);
    }
  }

  /** The first interval of the back-off, in milliseconds: a 32nd of {@code retryPeriod}, at least 1. */
  static int reconnectMillis(java.time.Duration retryPeriod) {
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, retryPeriod.toMillis() / BACKOFF_CAP_FACTOR));
  }

  /** The client of its own the informer lists and watches through. */
  KubernetesClient client() {
    return client;
  }

  /** Whether a list has been reported. */
  synchronized boolean synced() {
    return listedOnce;
  }

  /**
   * For a test's failure message: the informer's state and the list's progress. Does not take this source's lock (a
   * test calls it when that lock may be what is stuck), so what it reads may be a moment old.
   */
  String describe() {
    SharedIndexInformer<Lease> current = informer;
    java.util.Set<String> left = unreported;
    return "ShardLeaseSource{generation " + generation + ", listed " + listedOnce + ", unreported " + (left == null
        ? "none" : left.size()) + ", reported " + reported.size() + ", closed " + closed + ", informer " + (current
        == null ? "none" : "running " + current.isRunning() + ", watching " + current.isWatching() + ", synced "
        + current.hasSynced() + ", store " + current.getStore().list().size()) + "}";
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
   * reference, finalizer or label but {@link ShardLeases#LABEL} and {@link LeaseRecords#HAND_OVER_PROOF} (which a write
   * from the record sets or drops as the record says; the fields the server sets, its uid and times, the server keeps).
   */
  private static boolean bare(ObjectMeta metadata) {
    return (metadata.getAnnotations() == null
        || java.util.Set.of(LeaseRecords.HAND_OVER_PROOF).containsAll(metadata.getAnnotations().keySet()))
        && isEmpty(metadata.getOwnerReferences())
        && isEmpty(metadata.getFinalizers())
        && (metadata.getLabels() == null || ShardLeases.LABEL_ONLY.containsAll(metadata.getLabels().keySet()));
  }

  private static boolean isEmpty(java.util.Collection<?> collection) {
    return collection == null || collection.isEmpty();
  }

  @Override
  public void close() {
    SharedIndexInformer<Lease> last;
    synchronized (this) {
      closed = true;
      last = informer;
    }
    try {
      last.close();
    } finally {
      try {
        // A replaced informer whose stop has not run yet is stopped here: none runs once this returns.
        for (SharedIndexInformer<Lease> replaced : stopping) {
          stop(replaced);
        }
      } finally {
        client.close(); // its own: the user's client and HTTP client stay open
      }
    }
  }
}
