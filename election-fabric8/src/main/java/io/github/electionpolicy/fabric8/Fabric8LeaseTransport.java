package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.RequestConfig;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link LeaseTransport} of production runners: the Lease requests go out asynchronously, with fabric8's
 * {@code HttpClient.sendAsync}, and no thread waits for their answers. They go through a client derived from the
 * user's that keeps its HTTP client, credentials and impersonation but none of its retries, and each is bounded by
 * {@link LeaseSettings#requestTimeout()}; {@value SharedPools#IO_MAX_CALLS} at most are in flight in the JVM
 * ({@link SharedPools#leaseRequests()}). Remembers the last Lease it saw, so a write keeps the labels, annotations
 * and owner references a user put on it. Writes the leadership Events on the Lease (its uid from the last Lease
 * seen, so {@code kubectl describe lease} finds them) the same way. The follower's watch opens and the preflight
 * runs on the shared workers ({@link SharedPools#io()}): each is a one-off per runner.
 */
final class Fabric8LeaseTransport implements LeaseTransport {

  private static final Logger LOG = LoggerFactory.getLogger(Fabric8LeaseTransport.class);
  private static final int REVIEW_TIMEOUT_MILLIS = 10_000;
  private static final String JSON = "application/json";

  private final KubernetesClient client;
  private final KubernetesClient reviewClient;
  private final String namespace;
  private final String name;
  private final LeaseSettings settings;
  private final ExecutorService io;
  private final java.util.concurrent.Executor handOver;
  private final SharedPools.InFlight requests;
  private final SharedPools.InFlight eventWrites;
  private final HttpClient http;
  private final KubernetesSerialization serialization;
  private final long timeoutMillis;
  private final String leasesUrl;
  private final String leaseUrl;
  private final String eventsUrl;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Set<Call> inFlight = ConcurrentHashMap.newKeySet();
  private volatile Lease lastSeen;
  private final EventAccess eventAccess;
  // The preflight's advice kept off the start path (the watch review), sent at firstAttemptOver.
  private final java.util.concurrent.atomic.AtomicReference<Runnable> afterFirstAttempt =
      new java.util.concurrent.atomic.AtomicReference<>();

  Fabric8LeaseTransport(KubernetesClient userClient, String namespace, LeaseSettings settings, ExecutorService io) {
    this(userClient, namespace, settings, io, SharedPools.handOver(), SharedPools.leaseRequests(),
        SharedPools.eventWrites());
  }

  /**
   * With its own executors and bounds, for tests: {@code handOver} runs the short task that hands a request (which
   * holds its place in {@code requests} or {@code eventWrites} already) to the HTTP client.
   */
  Fabric8LeaseTransport(KubernetesClient userClient, String namespace, LeaseSettings settings, ExecutorService io,
      java.util.concurrent.Executor handOver, SharedPools.InFlight requests, SharedPools.InFlight eventWrites) {
    int timeoutMillis = (int) Math.min(Integer.MAX_VALUE, settings.requestTimeout().toMillis());
    // A derived client shares the user's HTTP client and request settings (impersonation included, so the
    // Lease calls run as the same user as the preflight's reviews) but not its retry and timeout settings:
    // the retries of a default client would keep a cut-off leader believing it leads long after its deadline.
    RequestConfig userRequests = userClient.getConfiguration().getRequestConfig();
    this.client = userClient
        .newClient((userRequests == null ? new RequestConfigBuilder() : new RequestConfigBuilder(userRequests))
            .withRequestTimeout(timeoutMillis)
            .withRequestRetryBackoffLimit(0)
            .withWatchReconnectInterval(Math.max(100, timeoutMillis / 4))
            .withWatchReconnectLimit(-1)
            .build())
        .adapt(KubernetesClient.class);
    // The preflight's reviews: a one-off at start, off the renew path, that may take the time a cold client needs
    // to connect; each bounded (10 s) and never retried, so a server that does not answer holds an I/O thread
    // that long only.
    this.reviewClient = userClient
        .newClient((userRequests == null ? new RequestConfigBuilder() : new RequestConfigBuilder(userRequests))
            .withRequestTimeout(REVIEW_TIMEOUT_MILLIS)
            .withRequestRetryBackoffLimit(0)
            .build())
        .adapt(KubernetesClient.class);
    this.namespace = namespace;
    this.name = settings.leaseName();
    this.settings = settings;
    this.io = io;
    this.eventAccess = settings.leadershipEvents() ? new EventAccess(namespace, name) : null;
    this.handOver = handOver;
    this.requests = requests;
    this.eventWrites = eventWrites;
    // The derived client's own HTTP client: the user's connections, TLS, credentials and interceptors
    // (impersonation included), tagged with the request settings above, so fabric8 retries none of these requests.
    this.http = client.getHttpClient();
    this.serialization = client.getKubernetesSerialization();
    this.timeoutMillis = timeoutMillis;
    String master = client.getConfiguration().getMasterUrl();
    String root = master.endsWith("/") ? master.substring(0, master.length() - 1) : master;
    this.leasesUrl = root + "/apis/coordination.k8s.io/v1/namespaces/" + namespace + "/leases";
    this.leaseUrl = leasesUrl + "/" + name;
    this.eventsUrl = root + "/api/v1/namespaces/" + namespace + "/events";
  }

  /** The derived client the Lease calls use. */
  KubernetesClient client() {
    return client;
  }

  @Override
  public Call read(Answered done) {
    return send("get Lease", () -> http.newHttpRequestBuilder().uri(leaseUrl), (code, body) -> {
      if (code == LeaseCallFailed.NOT_FOUND) {
        // As fabric8's get(): a missing Lease is an answer, not a failure.
        return new LeaseStep.Answer.Missing();
      }
      Lease lease = serialization.unmarshal(body, Lease.class);
      lastSeen = lease;
      return new LeaseStep.Answer.Found(LeaseRecords.record(lease));
    }, done);
  }

  @Override
  public Call create(LeaseRecord record, Answered done) {
    Lease lease = LeaseRecords.lease(record, lastSeen, namespace, name);
    return send("create Lease",
        () -> http.newHttpRequestBuilder().uri(leasesUrl).post(JSON, serialization.asJson(lease)), this::written,
        done);
  }

  @Override
  public Call update(LeaseRecord record, Answered done) {
    Lease lease = LeaseRecords.lease(record, lastSeen, namespace, name);
    return send("update Lease",
        () -> http.newHttpRequestBuilder().uri(leaseUrl).put(JSON, serialization.asJson(lease)), this::written,
        done);
  }

  private LeaseStep.Answer written(int code, String body) {
    Lease lease = serialization.unmarshal(body, Lease.class);
    lastSeen = lease;
    return new LeaseStep.Answer.Written(LeaseRecords.record(lease));
  }

  /** What turns a successful answer (or, for a read, a 404) into the protocol's answer. */
  @FunctionalInterface
  private interface Reading {
    LeaseStep.Answer read(int code, String body);
  }

  /**
   * A request in flight: answered at most once, by its response, its failure, a cancel or the close; its place in
   * the JVM's bound is given back once, whichever comes first.
   */
  private final class Request implements Call {
    private final AtomicBoolean over = new AtomicBoolean();
    private final AtomicBoolean placeGiven = new AtomicBoolean();
    private volatile CompletableFuture<?> response;

    /** Ends it; true if this was the end (nothing answered it before). */
    boolean end() {
      if (!over.compareAndSet(false, true)) {
        return false;
      }
      inFlight.remove(this);
      givePlaceBack();
      return true;
    }

    void givePlaceBack() {
      if (placeGiven.compareAndSet(false, true)) {
        requests.release();
      }
    }

    @Override
    public void cancel() {
      if (end()) {
        CompletableFuture<?> sent = response;
        if (sent != null) {
          // Completes the future at once (its answer, if it still comes, is dropped); the exchange itself ends by
          // its request timeout at the latest.
          sent.cancel(true);
        }
      }
      inFlight.remove(this);
    }
  }

  /**
   * Sends a request with the derived client's {@code sendAsync}: no thread waits for its answer. The request is
   * handed to the HTTP client on a worker ({@link SharedPools#handOver()}), not on the caller's thread (the shared
   * loop): fabric8's interceptors run there, and one that refreshes a token (an exec credential plugin) may take
   * seconds. The answer comes on the HTTP client's thread, and {@code done} only posts it to the loop.
   */
  private Call send(String what, java.util.function.Supplier<HttpRequest.Builder> request, Reading reading,
      Answered done) {
    Request call = new Request();
    if (closed.get()) {
      call.over.set(true);
      call.placeGiven.set(true);
      LeaseCallFailed refused = new LeaseCallFailed(what + " refused: the election is closing", null, 0);
      done.answered(failed(refused), refused);
      return call;
    }
    if (!requests.tryAcquire()) {
      call.over.set(true);
      call.placeGiven.set(true);
      LeaseCallFailed refused = new LeaseCallFailed(what + " refused: " + requests.refusal(), null, 0);
      done.answered(failed(refused), refused);
      return call;
    }
    inFlight.add(call);
    if (closed.get() && call.end()) {
      // Closed while this call was added: close() may not have seen it.
      LeaseCallFailed refused = new LeaseCallFailed(what + " refused: the election is closing", null, 0);
      done.answered(failed(refused), refused);
      return call;
    }
    try {
      handOver.execute(() -> {
        if (call.over.get()) {
          return; // cancelled (or closed) before it was sent
        }
        HttpRequest sent;
        CompletableFuture<HttpResponse<String>> response;
        try {
          sent = request.get().timeout(timeoutMillis, TimeUnit.MILLISECONDS).build();
          response = http.sendAsync(sent, String.class);
        } catch (RuntimeException | LinkageError e) {
          if (call.end()) {
            LeaseCallFailed failed = failure(what, e);
            done.answered(failed(failed), failed);
          }
          return;
        }
        call.response = response;
        if (call.over.get()) {
          response.cancel(true); // cancelled while it was being sent
        }
        response.whenComplete((answer, error) -> {
          if (!call.end()) {
            return; // cancelled, or the election closed
          }
          LeaseStep.Answer result;
          LeaseCallFailed failure = null;
          try {
            if (error != null) {
              failure = failure(what, error);
            } else if (!answer.isSuccessful()
                && !(answer.code() == LeaseCallFailed.NOT_FOUND && "GET".equals(sent.method()))) {
              failure = failure(what, requestFailure(sent, answer));
            }
            result = failure != null ? failed(failure) : reading.read(answer.code(), answer.body());
          } catch (RuntimeException | LinkageError e) {
            failure = failure(what, e);
            result = failed(failure);
          }
          done.answered(result, failure);
        });
      });
    } catch (RejectedExecutionException e) {
      if (call.end()) {
        LeaseCallFailed failed = new LeaseCallFailed(what + " refused: " + e, e, 0);
        done.answered(failed(failed), failed);
      }
    }
    return call;
  }

  /**
   * The failure of an HTTP error, as fabric8's resource API reports it: the status code, and the server's
   * {@code Status} (its message) when the body is one.
   */
  private KubernetesClientException requestFailure(HttpRequest request, HttpResponse<String> response) {
    Status status = null;
    String body = response.body();
    if (body != null && body.strip().startsWith("{")) {
      try {
        status = serialization.unmarshal(body, Status.class);
      } catch (RuntimeException notAStatus) {
        status = null;
      }
    }
    if (status == null || status.getCode() == null) {
      status = new StatusBuilder().withCode(response.code())
          .withMessage(body == null || body.isBlank() ? response.message() : body.strip()).build();
    }
    StringBuilder message = new StringBuilder("Failure executing: ").append(request.method()).append(" at: ")
        .append(request.uri()).append('.');
    if (status.getMessage() != null && !status.getMessage().isEmpty()) {
      message.append(" Message: ").append(status.getMessage()).append('.');
    }
    message.append(" Received status: ").append(status).append('.');
    return new KubernetesClientException(message.toString(), response.code(), status);
  }

  private static LeaseCallFailed failure(String what, Throwable e) {
    Throwable cause = e;
    while ((cause instanceof java.util.concurrent.ExecutionException || cause instanceof CompletionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    int code = cause instanceof KubernetesClientException kce ? kce.getCode() : 0;
    if (cause instanceof InterruptedException
        || cause instanceof KubernetesClientException && cause.getCause() instanceof InterruptedException) {
      return new LeaseCallFailed(what + " interrupted", cause, 0);
    }
    return new LeaseCallFailed(what + " failed: " + FailureCause.describe(cause), cause, Math.max(0, code));
  }

  static LeaseStep.Answer failed(LeaseCallFailed e) {
    LeaseStep.FailureKind kind = e.isConflict() ? LeaseStep.FailureKind.CONFLICT
        : e.isNotFound() ? LeaseStep.FailureKind.NOT_FOUND : LeaseStep.FailureKind.OTHER;
    return new LeaseStep.Answer.Failed(kind, e.getMessage());
  }

  /**
   * Watches the Lease. fabric8 reconnects a dropped watch by itself, resuming from the last resourceVersion it
   * saw; it reports {@link WatchEvents#closed()} only when it gives up (e.g. 410 Gone). A watch cancelled while it
   * opens is closed as soon as it is open.
   */
  @Override
  public Call watch(WatchEvents events) {
    AtomicBoolean over = new AtomicBoolean();
    Watch[] opened = new Watch[1];
    Future<?>[] future = new Future<?>[1];
    Object guard = new Object();
    Call call = new Call() {
      @Override
      public void cancel() {
        over.set(true);
        Watch watch;
        synchronized (guard) {
          watch = opened[0];
          opened[0] = null;
          // Not interrupted: fabric8's watch(), cut short while it opens, leaves its connection manager
          // reconnecting with no Watch returned to close it. Left to open, it is closed right after (below).
          if (future[0] != null) {
            future[0].cancel(false);
          }
        }
        inFlight.remove(this);
        if (watch != null) {
          // Off the caller's thread, which is usually the shared loop: a close that blocks must not hold it.
          Watch opened = watch;
          try {
            io.execute(() -> closeQuietly(opened));
          } catch (RejectedExecutionException e) {
            closeQuietly(opened);
          }
        }
      }
    };
    if (closed.get()) {
      return call;
    }
    inFlight.add(call);
    try {
      Future<?> submitted = io.submit(() -> {
        Watch watch;
        try {
          watch = client.leases().inNamespace(namespace).withName(name).watch(new Watcher<Lease>() {
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
              inFlight.remove(call);
              if (over.compareAndSet(false, true)) {
                events.closed();
              }
            }
          });
        } catch (RuntimeException | LinkageError failed) {
          LOG.debug("Watch of Lease {}/{} could not start: {}", namespace, name, failed.toString());
          inFlight.remove(call);
          if (over.compareAndSet(false, true)) {
            events.closed();
          }
          return;
        }
        synchronized (guard) {
          if (!over.get()) {
            opened[0] = watch;
            watch = null;
          }
        }
        if (watch != null) {
          // Cancelled (or closed) while it opened: it must not stay behind, reconnecting.
          closeQuietly(watch);
          return;
        }
        events.opened();
      });
      synchronized (guard) {
        future[0] = submitted;
      }
    } catch (RejectedExecutionException e) {
      inFlight.remove(call);
      over.set(true);
      events.closed();
    }
    return call;
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

  @Override
  public Call preflight(Consumer<Optional<LeaseAccessDeniedException>> done, Consumer<Throwable> failed) {
    AtomicBoolean over = new AtomicBoolean();
    Future<?>[] future = new Future<?>[1];
    Call call = new Call() {
      @Override
      public void cancel() {
        if (over.compareAndSet(false, true) && future[0] != null) {
          future[0].cancel(true);
        }
        inFlight.remove(this);
      }
    };
    inFlight.add(call);
    try {
      future[0] = io.submit(() -> runPreflight(call, over, done, failed));
    } catch (RejectedExecutionException e) {
      // Every I/O thread is busy: the preflight is never skipped, it runs on a thread of its own (a one-off).
      Thread own = new Thread(() -> runPreflight(call, over, done, failed), "election-preflight");
      own.setDaemon(true);
      own.start();
    }
    return call;
  }

  @Override
  public void firstAttemptOver() {
    Runnable advice = afterFirstAttempt.getAndSet(null);
    if (advice != null && !closed.get()) {
      advice.run(); // hands the review to the I/O pool: never blocks the loop
    }
  }

  private void runPreflight(Call call, AtomicBoolean over, Consumer<Optional<LeaseAccessDeniedException>> done,
      Consumer<Throwable> failed) {
    Optional<LeaseAccessDeniedException> denied;
    try {
      denied = RbacPreflight.check(reviewClient, namespace, settings, () -> over.get() || closed.get(),
          closed::get, io, eventAccess, afterFirstAttempt::set);
    } catch (RuntimeException | Error e) {
      inFlight.remove(call);
      if (over.compareAndSet(false, true)) {
        failed.accept(e);
      }
      return;
    }
    inFlight.remove(call);
    if (over.compareAndSet(false, true)) {
      done.accept(denied);
    }
  }

  /**
   * Creates the Event asynchronously, as the Lease requests, with the Lease calls' client (its request timeout, no
   * retries), bounded apart from them ({@link SharedPools#eventWrites()}); not among the calls in flight, so a close
   * neither cuts it short nor refuses it. A 403 goes to the {@link EventAccess}, which warns once; any other
   * failure is logged at DEBUG.
   */
  @Override
  public void recordEvent(LeadershipEvent event, Runnable done) {
    // Written after a close too: the Event that ends a closing runner's term is due just before its transport
    // closes, and may wait behind an earlier one still in flight.
    if (!eventWrites.tryAcquire()) {
      LOG.debug("Leadership Event \"{}\" on Lease {}/{} not recorded: {}", event.message(), namespace, name,
          eventWrites.refusal());
      done.run();
      return;
    }
    AtomicBoolean over = new AtomicBoolean();
    Runnable finish = () -> {
      if (over.compareAndSet(false, true)) {
        eventWrites.release();
        done.run();
      }
    };
    try {
      handOver.execute(() -> {
        HttpRequest request;
        CompletableFuture<HttpResponse<String>> response;
        try {
          request = http.newHttpRequestBuilder().uri(eventsUrl).post(JSON, serialization.asJson(event(event)))
              .timeout(timeoutMillis, TimeUnit.MILLISECONDS).build();
          response = http.sendAsync(request, String.class);
        } catch (RuntimeException | LinkageError e) {
          notRecorded(event, e);
          finish.run();
          return;
        }
        response.whenComplete((answer, error) -> {
          try {
            if (error != null) {
              notRecorded(event, error);
            } else if (answer.code() == 403 && eventAccess != null) {
              eventAccess.denied("the server refused to create the Event \"" + event.message() + "\" with HTTP 403");
            } else if (!answer.isSuccessful()) {
              notRecorded(event, requestFailure(request, answer));
            }
          } finally {
            finish.run();
          }
        });
      });
    } catch (RejectedExecutionException e) {
      LOG.debug("Leadership Event \"{}\" on Lease {}/{} not recorded: {}", event.message(), namespace, name,
          e.toString());
      finish.run();
    }
  }

  private void notRecorded(LeadershipEvent event, Throwable failure) {
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause()
        : failure;
    LOG.debug("Could not record the leadership Event \"{}\" on Lease {}/{}: {}", event.message(), namespace, name,
        FailureCause.describe(cause));
  }

  /** The core/v1 Event, shaped as client-go's recorder writes it, on the Lease as it was last seen. */
  Event event(LeadershipEvent event) {
    Lease seen = lastSeen;
    String when = event.time().truncatedTo(ChronoUnit.SECONDS).toString();
    return new EventBuilder()
        .withNewMetadata().withName(event.name()).withNamespace(namespace).endMetadata()
        .withNewInvolvedObject()
        .withApiVersion("coordination.k8s.io/v1")
        .withKind("Lease")
        .withNamespace(namespace)
        .withName(name)
        .withUid(seen == null || seen.getMetadata() == null ? null : seen.getMetadata().getUid())
        .endInvolvedObject()
        .withType(event.kind().type())
        .withReason(LeadershipEvent.REASON)
        .withMessage(event.message())
        .withFirstTimestamp(when)
        .withLastTimestamp(when)
        .withCount(1)
        .withNewSource().withComponent(event.identity()).endSource()
        .withReportingComponent(LeadershipEvent.REPORTING_COMPONENT)
        .withReportingInstance(event.identity())
        .build();
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (Call call : inFlight.toArray(new Call[0])) {
      call.cancel();
    }
    inFlight.clear();
  }

  /** The longest wait of one request, for logs. */
  Duration requestTimeout() {
    return settings.requestTimeout();
  }
}
