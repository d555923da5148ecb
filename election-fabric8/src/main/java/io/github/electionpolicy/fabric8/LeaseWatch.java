package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.github.electionpolicy.fabric8.LeaseTransport.Call;
import io.github.electionpolicy.fabric8.LeaseTransport.WatchEvents;
import io.fabric8.kubernetes.api.model.ListOptions;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The follower's watch of one {@link Fabric8LeaseTransport}'s Lease: opens each watch, reports its events, and
 * closes a watch that is cancelled (or whose transport closes) while it opens as soon as it is open, so none stays
 * behind reconnecting.
 *
 * <p>A watch opens without a thread waiting for it, as a Lease request is sent: the open is handed to the HTTP
 * client on {@link SharedPools#handOver()} (fabric8's interceptors run there) with fabric8's own non-blocking
 * {@code submitWatch}, the one its informers use, and it holds a place among the JVM's Lease calls in flight
 * ({@link SharedPools#leaseRequests()}) until the server has answered the upgrade, as a request does until its
 * answer, or until the watch is cancelled: fabric8 bounds no watch's request in time, so an open the server never
 * answers would otherwise keep its place for good. {@code submitWatch} is public on fabric8's resource operations but declared by an interface of its
 * {@code impl} package ({@code informers.impl.ListerWatcher}, in fabric8 7.x and 8.0 alike), so it is looked up
 * at run time; a client whose resources do not offer it opens its watches with the blocking {@code watch()} on
 * a worker of {@link SharedPools#io()} instead, as before. Measured at 1,000 elections on one JVM, those blocking
 * opens were most of what kept the workers busy.
 *
 * <p>The transport owns the close: no watch opens once its {@code closed} is set, and each is among its
 * {@code inFlight} calls until it ends. Thread-safe: a watch's cancel and its opening meet under that watch's own
 * guard.
 */
final class LeaseWatch {

  private static final Logger LOG = LoggerFactory.getLogger(LeaseWatch.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final ExecutorService io;
  private final Executor handOver;
  private final SharedPools.InFlight requests;
  private final AtomicBoolean closed;
  private final Set<Call> inFlight;
  private final boolean nonBlocking;
  // fabric8's non-blocking open, once looked up (null: not yet); the same for every resource of this client.
  private volatile Optional<MethodHandle> submitWatch;

  /**
   * Watches of the Lease {@code namespace/name} through {@code client}, each opened with fabric8's non-blocking
   * open handed over on {@code handOver} and holding a place in {@code requests} while it opens, or, when
   * {@code nonBlocking} is false or the client's resources do not offer that open, with the blocking one on
   * {@code io}; {@code closed} and {@code inFlight} are the transport's.
   */
  LeaseWatch(KubernetesClient client, String namespace, String name, ExecutorService io, Executor handOver,
      SharedPools.InFlight requests, AtomicBoolean closed, Set<Call> inFlight, boolean nonBlocking) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
    this.io = io;
    this.handOver = handOver;
    this.requests = requests;
    this.closed = closed;
    this.inFlight = inFlight;
    this.nonBlocking = nonBlocking;
  }

  /**
   * Watches the Lease. fabric8 reconnects a dropped watch by itself, resuming from the last resourceVersion it
   * saw; it reports {@link WatchEvents#closed()} only when it gives up (e.g. 410 Gone). A watch cancelled while it
   * opens is closed as soon as it is open.
   */
  Call open(WatchEvents events) {
    Watching watching = new Watching(events);
    if (closed.get()) {
      return watching;
    }
    inFlight.add(watching);
    if (closed.get()) {
      // The transport closed between the read above and the add: its close set closed before it cancelled what
      // inFlight held, so it may not have seen this call. Never opened, never reported.
      watching.cancel();
      return watching;
    }
    Resource<Lease> resource = client.leases().inNamespace(namespace).withName(name);
    Optional<MethodHandle> submit = nonBlocking ? submitWatch(resource) : Optional.empty();
    if (submit.isPresent()) {
      openWithoutWaiting(submit.get(), resource, watching);
      return watching;
    }
    try {
      watching.openedOn(io.submit(() -> {
        Watch watch;
        try {
          watch = resource.watch(watching);
        } catch (RuntimeException | LinkageError failed) {
          watching.failed(failed);
          return;
        }
        watching.opened(watch);
      }));
    } catch (RejectedExecutionException e) {
      watching.failed(e);
    }
    return watching;
  }

  /** fabric8's non-blocking open for this client's resources, looked up once. */
  private Optional<MethodHandle> submitWatch(Object resource) {
    Optional<MethodHandle> found = submitWatch;
    if (found == null) {
      found = SubmitWatch.of(resource);
      submitWatch = found;
    }
    return found;
  }

  /**
   * Opens the watch with fabric8's {@code submitWatch}, handed over to the HTTP client: the place it holds among
   * the Lease calls is given back once the server has answered the upgrade (or refused it, or the open failed),
   * or once the watch is cancelled (its elector stopped it, the transport closed): fabric8 puts no timeout on a
   * watch's request, so a server that accepts the connection and never answers would keep the place for good
   * (finding 3 of h-attack7). The open is never cut short: a watch cancelled meanwhile is closed once it is open,
   * as the blocking open's is.
   */
  private void openWithoutWaiting(MethodHandle submit, Object resource, Watching watching) {
    if (!requests.tryAcquire()) {
      watching.failed(new RejectedExecutionException(requests.refusal()));
      return;
    }
    AtomicBoolean placeGiven = new AtomicBoolean();
    Runnable givePlaceBack = () -> {
      if (placeGiven.compareAndSet(false, true)) {
        requests.release();
      }
    };
    // A cancel from now on gives it back; one before this saw none, and the hand-over gives it back instead.
    watching.placeBack = givePlaceBack;
    try {
      handOver.execute(() -> {
        if (watching.over.get()) {
          givePlaceBack.run(); // cancelled (or closed) before it was sent
          return;
        }
        CompletableFuture<?> open;
        try {
          open = (CompletableFuture<?>) submit.invoke(resource, new ListOptions(), watching);
        } catch (Throwable failed) { // MethodHandle.invoke declares Throwable; fabric8's submitWatch throws none
          givePlaceBack.run();
          watching.failed(failed);
          if (failed instanceof Error error && !(failed instanceof LinkageError)) {
            throw error; // the JVM's (out of memory, say): the hand-over thread reports it; the follower polls on
          }
          return;
        }
        open.whenComplete((watch, failure) -> {
          givePlaceBack.run();
          if (failure != null) {
            watching.failed(failure);
          } else {
            watching.opened((Watch) watch);
          }
        });
      });
    } catch (RejectedExecutionException e) {
      givePlaceBack.run();
      watching.failed(e);
    }
  }

  /**
   * One watch: the call the elector holds, the watcher fabric8 reports to, and what becomes of it once its open is
   * over, whichever way it opened. Its cancel and its opening meet under its own monitor.
   */
  private final class Watching implements Call, Watcher<Lease> {
    private final WatchEvents events;
    private final AtomicBoolean over = new AtomicBoolean();
    private Watch opened;
    private Future<?> opening;
    // Gives back the place a non-blocking open holds, once (null for the blocking open, which holds a worker's).
    private volatile Runnable placeBack;

    Watching(WatchEvents events) {
      this.events = events;
    }

    @Override
    public void cancel() {
      over.set(true);
      Watch watch;
      synchronized (this) {
        watch = opened;
        opened = null;
        // Not interrupted: fabric8's watch(), cut short while it opens, leaves its connection manager
        // reconnecting with no Watch returned to close it. Left to open, it is closed right after (opened).
        if (opening != null) {
          opening.cancel(false);
        }
      }
      inFlight.remove(this);
      Runnable place = placeBack;
      if (place != null) {
        place.run();
      }
      if (watch != null) {
        // Off the caller's thread, which is usually the shared loop: fabric8's close runs its own code (and a
        // blocking one must not hold the loop), a short task that waits for no answer, as a hand-over is.
        Watch open = watch;
        try {
          handOver.execute(() -> closeQuietly(open));
        } catch (RejectedExecutionException e) {
          closeQuietly(open);
        }
      }
    }

    @Override
    public void eventReceived(Action action, Lease lease) {
      if (over.get()) {
        return;
      }
      if (action == Action.DELETED) {
        events.changed(null);
      } else if (action == Action.ADDED || action == Action.MODIFIED) {
        events.changed(LeaseRecords.record(lease));
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      LOG.debug("Watch of Lease {}/{} closed: {}", namespace, name, cause.getMessage());
      // Given up by fabric8: nothing is left to close, and the elector opens a new watch (a new call).
      inFlight.remove(this);
      if (over.compareAndSet(false, true)) {
        events.closed();
      }
    }

    /** The blocking open's task, which a cancel stops before it starts. */
    synchronized void openedOn(Future<?> task) {
      opening = task;
    }

    void failed(Throwable failed) {
      LOG.debug("Watch of Lease {}/{} could not start: {}", namespace, name, failed.toString());
      inFlight.remove(this);
      if (over.compareAndSet(false, true)) {
        events.closed();
      }
    }

    void opened(Watch watch) {
      synchronized (this) {
        if (!over.get()) {
          opened = watch;
          watch = null;
        }
      }
      if (watch != null) {
        // Cancelled (or closed) while it opened: it must not stay behind, reconnecting.
        closeQuietly(watch);
        return;
      }
      events.opened();
    }
  }

  /** fabric8's non-blocking watch open, where a resource operation offers it. */
  static final class SubmitWatch {
    private static final String LISTER_WATCHER = "io.fabric8.kubernetes.client.informers.impl.ListerWatcher";
    private static final MethodType TYPE = MethodType.methodType(CompletableFuture.class, ListOptions.class,
        Watcher.class);

    private SubmitWatch() {}

    /** {@code submitWatch(ListOptions, Watcher)} bound to nothing yet, if {@code resource} offers it. */
    static Optional<MethodHandle> of(Object resource) {
      try {
        Class<?> listerWatcher = Class.forName(LISTER_WATCHER, false, resource.getClass().getClassLoader());
        if (!listerWatcher.isInstance(resource)) {
          return Optional.empty();
        }
        return Optional.of(MethodHandles.publicLookup().findVirtual(listerWatcher, "submitWatch", TYPE));
      } catch (ReflectiveOperationException | LinkageError | SecurityException e) {
        return Optional.empty();
      }
    }
  }

  private void closeQuietly(Watch watch) {
    if (watch == null) {
      return;
    }
    try {
      watch.close();
    } catch (RuntimeException e) {
      LOG.debug("Closing the watch of Lease {}/{} failed: {}", namespace, name, e.toString());
    }
  }
}
