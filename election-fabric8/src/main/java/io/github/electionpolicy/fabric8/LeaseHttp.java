package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.github.electionpolicy.fabric8.LeaseTransport.Answered;
import io.github.electionpolicy.fabric8.LeaseTransport.Call;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The asynchronous HTTP of one {@link Fabric8LeaseTransport}: the URLs of its Lease and its Events, building and
 * sending a request with the derived client's {@code sendAsync} (handed over on {@link SharedPools#handOver()}),
 * the place each holds in the JVM's bounds ({@link SharedPools#leaseRequests()}, {@link SharedPools#eventWrites()}),
 * and turning an HTTP answer or error into a {@link LeaseStep.Answer} and a {@link LeaseCallFailed}. What an answer
 * means for the Lease (the record, the Lease last seen) stays with the transport, which also owns the close: this
 * class refuses a request once the transport's {@code closed} is set, and keeps each Lease request among the
 * transport's {@code inFlight} calls until it ends. Thread-safe: every request is answered at most once, on
 * whichever thread ends it.
 */
final class LeaseHttp {

  private static final Logger LOG = LoggerFactory.getLogger(LeaseHttp.class);
  private static final String JSON = "application/json";

  private final HttpClient http;
  private final KubernetesSerialization serialization;
  private final long timeoutMillis;
  private final String leasesUrl;
  private final String leaseUrl;
  private final String eventsUrl;
  private final String namespace;
  private final String name;
  private final java.util.concurrent.Executor handOver;
  private final SharedPools.InFlight requests;
  private final SharedPools.InFlight eventWrites;
  private final AtomicBoolean closed;
  private final Set<Call> inFlight;

  /**
   * Requests of the Lease {@code namespace/name} through {@code client} (the transport's derived client), each
   * bounded by {@code timeoutMillis}; {@code closed} and {@code inFlight} are the transport's.
   */
  LeaseHttp(KubernetesClient client, String namespace, String name, long timeoutMillis,
      java.util.concurrent.Executor handOver, SharedPools.InFlight requests, SharedPools.InFlight eventWrites,
      AtomicBoolean closed, Set<Call> inFlight) {
    this.namespace = namespace;
    this.name = name;
    this.handOver = handOver;
    this.requests = requests;
    this.eventWrites = eventWrites;
    this.closed = closed;
    this.inFlight = inFlight;
    // The derived client's own HTTP client: the user's connections, TLS, credentials and interceptors
    // (impersonation included), tagged with the transport's request settings, so fabric8 retries none of these
    // requests.
    this.http = client.getHttpClient();
    this.serialization = client.getKubernetesSerialization();
    this.timeoutMillis = timeoutMillis;
    String root = apiRoot(client);
    this.leasesUrl = root + "/apis/coordination.k8s.io/v1/namespaces/" + namespace + "/leases";
    this.leaseUrl = leasesUrl + "/" + name;
    this.eventsUrl = root + "/api/v1/namespaces/" + namespace + "/events";
  }

  /** The client's API server URL without a trailing slash, to which API paths are appended. */
  static String apiRoot(io.fabric8.kubernetes.client.Client client) {
    String master = client.getConfiguration().getMasterUrl();
    return master.endsWith("/") ? master.substring(0, master.length() - 1) : master;
  }

  /** A GET of the Lease. */
  HttpRequest.Builder getLease() {
    return http.newHttpRequestBuilder().uri(leaseUrl);
  }

  /** A POST of {@code lease} to the namespace's Leases. */
  HttpRequest.Builder createLease(Object lease) {
    return http.newHttpRequestBuilder().uri(leasesUrl).post(JSON, serialization.asJson(lease));
  }

  /** A PUT of {@code lease} to the Lease. */
  HttpRequest.Builder updateLease(Object lease) {
    return http.newHttpRequestBuilder().uri(leaseUrl).put(JSON, serialization.asJson(lease));
  }

  /**
   * A DELETE of the Lease with {@code DeleteOptions} preconditions: the server deletes it only if its
   * resourceVersion (and uid, when given) are still these, else answers 409.
   */
  HttpRequest.Builder deleteLease(String resourceVersion, String uid) {
    java.util.Map<String, Object> preconditions = new java.util.LinkedHashMap<>();
    preconditions.put("resourceVersion", resourceVersion);
    if (uid != null) {
      preconditions.put("uid", uid);
    }
    java.util.Map<String, Object> options = new java.util.LinkedHashMap<>();
    options.put("apiVersion", "v1");
    options.put("kind", "DeleteOptions");
    options.put("preconditions", preconditions);
    return http.newHttpRequestBuilder().uri(leaseUrl).delete(JSON, serialization.asJson(options));
  }

  /** What turns a successful answer (or, for a read, a 404) into the protocol's answer. */
  @FunctionalInterface
  interface Reading {
    LeaseStep.Answer read(int code, String body);
  }

  /**
   * A request in flight: answered at most once, by its response, its failure, a cancel or the close. Its place in
   * the JVM's bound is given back once: at its end if it was never handed to the HTTP client; when its exchange ends
   * (answered, failed or timed out) if the client took it; and, for a request ended while still inside the client's
   * {@code sendAsync}, when that returns and its exchange ends, or a request timeout after its end if
   * {@code sendAsync} has not returned by then. fabric8's {@code sendAsync} aborts no exchange whose future is
   * cancelled, and may already have sent the request before it returns (a request seen at the server while its
   * {@code sendAsync} had not returned), so a request cancelled there keeps its place until its exchange is over.
   * Only an interceptor that holds {@code sendAsync} longer than the request timeout (a credential plugin that never
   * returns, finding 4 of h-attack8) has its place given back without its exchange: its request, if it ever goes
   * out, goes out without a place, and its answer is dropped.
   */
  private final class Request implements Call {
    private static final int QUEUED = 0;
    private static final int SENT = 1;
    private static final int DROPPED = 2;
    private static final int STARTED = 3;
    private final AtomicBoolean over = new AtomicBoolean();
    private final AtomicBoolean placeGiven = new AtomicBoolean();
    private final java.util.concurrent.atomic.AtomicInteger phase = new java.util.concurrent.atomic.AtomicInteger();

    /** Ends it; true if this was the end (nothing answered it before). */
    boolean end() {
      if (!over.compareAndSet(false, true)) {
        return false;
      }
      inFlight.remove(this);
      if (phase.compareAndSet(QUEUED, DROPPED)) {
        givePlaceBack(); // never handed to the HTTP client: nothing at the server
      } else if (phase.get() == SENT && !placeGiven.get()) {
        // Still in sendAsync, which may have sent it already: its place stays until its exchange is over (see
        // started()), unless sendAsync holds on past a request timeout (an interceptor that never returns).
        RunnerLoop.shared().schedule(TimeUnit.MILLISECONDS.toNanos(timeoutMillis), () -> {
          if (phase.compareAndSet(SENT, DROPPED)) {
            givePlaceBack();
          }
        });
      }
      return true;
    }

    /**
     * The HTTP client took the request ({@code sendAsync} returned): its exchange holds the place from now, until
     * it ends; false if a request timeout passed since the request was ended and its place was given back.
     */
    boolean started() {
      return phase.compareAndSet(SENT, STARTED);
    }

    /** Whether it may be handed to the HTTP client: not ended before; from then on its exchange holds the place. */
    boolean send() {
      return phase.compareAndSet(QUEUED, SENT);
    }

    void givePlaceBack() {
      if (placeGiven.compareAndSet(false, true)) {
        requests.release();
      }
    }

    @Override
    public void cancel() {
      // Its answer, if it still comes, is dropped; the exchange itself ends by its request timeout at the latest.
      end();
    }
  }

  /**
   * Sends a request with the derived client's {@code sendAsync}: no thread waits for its answer. The request is
   * handed to the HTTP client on a worker ({@link SharedPools#handOver()}), not on the caller's thread (the shared
   * loop): fabric8's interceptors run there, and one that refreshes a token (an exec credential plugin) may take
   * seconds. The answer comes on the HTTP client's thread, and {@code done} only posts it to the loop.
   */
  Call send(String what, java.util.function.Supplier<HttpRequest.Builder> request, Reading reading,
      Answered done) {
    Request call = new Request();
    boolean closing = closed.get();
    if (closing || !requests.tryAcquire()) {
      // Refused before it held a place: nothing to give back.
      call.over.set(true);
      call.placeGiven.set(true);
      return refuse(call, what, closing ? "the election is closing" : requests.refusal(), done);
    }
    inFlight.add(call);
    if (closed.get() && call.end()) {
      // Closed while this call was added: close() may not have seen it.
      return refuse(call, what, "the election is closing", done);
    }
    try {
      handOver.execute(() -> {
        if (!call.send()) {
          return; // cancelled (or closed) before it was sent: its place is given back already
        }
        HttpRequest sent;
        CompletableFuture<HttpResponse<String>> response;
        try {
          sent = request.get().timeout(timeoutMillis, TimeUnit.MILLISECONDS).build();
          response = http.sendAsync(sent, String.class);
          call.started();
        } catch (RuntimeException | LinkageError e) {
          call.givePlaceBack();
          if (call.end()) {
            LeaseCallFailed failed = failure(what, e);
            done.answered(failed(failed), failed);
          }
          return;
        }
        response.whenComplete((answer, error) -> {
          call.givePlaceBack(); // the exchange is over
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

  private static Call refuse(Call call, String what, String why, Answered done) {
    LeaseCallFailed refused = new LeaseCallFailed(what + " refused: " + why, null, 0);
    done.answered(failed(refused), refused);
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
   * Creates the Event {@code body} (built on the hand-over thread) for {@code event}, as the Lease requests are
   * sent, bounded apart from them ({@link SharedPools#eventWrites()}); not among the calls in flight, so a close
   * neither cuts it short nor refuses it. A 403 goes to {@code eventAccess} (if any), which warns once; any other
   * failure is logged at DEBUG. {@code done} runs once, when the write is over (or refused).
   */
  void recordEvent(LeadershipEvent event, java.util.function.Supplier<?> body, EventAccess eventAccess,
      Runnable done) {
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
          request = http.newHttpRequestBuilder().uri(eventsUrl).post(JSON, serialization.asJson(body.get()))
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
}
