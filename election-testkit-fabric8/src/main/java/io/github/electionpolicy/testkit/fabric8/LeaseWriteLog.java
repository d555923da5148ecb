package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The embedded server's own record of every Lease write it accepted: a decorator around the CRUD dispatcher,
 * so what it records is what the server stored. It also applies what the CRUD dispatcher ignores, a delete's
 * {@code DeleteOptions} preconditions (resourceVersion, uid): a Lease that does not match them is left in place
 * and the delete answered 409, as kube-apiserver answers it; Lease writes and deletes are applied one at a time, so
 * no write comes between a delete's check and the delete. Thread-safe: the server dispatches on several threads.
 */
final class LeaseWriteLog extends Dispatcher {

  private static final String LEASES = "/apis/coordination.k8s.io/v1/namespaces/";

  private final Dispatcher delegate;
  private final List<LeaseWrite> writes = new CopyOnWriteArrayList<>();
  private final Consumer<LeaseWrite> listener;
  // Lease writes and deletes, one at a time: a delete's preconditions are checked and applied with no write between.
  private final Object leaseChanges = new Object();

  LeaseWriteLog(Dispatcher delegate, Consumer<LeaseWrite> listener) {
    this.delegate = delegate;
    this.listener = listener;
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    String m = request.getMethod();
    String p = request.getPath();
    boolean leaseChange = p != null && p.startsWith(LEASES) && p.contains("/leases")
        && ("PUT".equals(m) || "POST".equals(m) || "PATCH".equals(m) || "DELETE".equals(m));
    if (!leaseChange) {
      return dispatchAndRecord(request);
    }
    synchronized (leaseChanges) {
      if ("DELETE".equals(m)) {
        MockResponse refused = preconditionFailed(request);
        if (refused != null) {
          return refused;
        }
      }
      return dispatchAndRecord(request);
    }
  }

  /**
   * A 409 for a delete whose preconditions the stored Lease does not meet; null when it has none, meets them, or
   * is not there (the delete itself then answers 404).
   */
  @SuppressWarnings("unchecked")
  private MockResponse preconditionFailed(RecordedRequest request) {
    String body = request.getUtf8Body();
    if (body == null || body.isBlank()) {
      return null;
    }
    Map<String, Object> options;
    try {
      options = Serialization.unmarshal(body, Map.class);
    } catch (RuntimeException e) {
      return null;
    }
    Object given = options == null ? null : options.get("preconditions");
    if (!(given instanceof Map)) {
      return null;
    }
    Map<String, Object> preconditions = (Map<String, Object>) given;
    MockResponse current = delegate.dispatch(new RecordedRequest(request.getHttpVersion(), HttpMethod.GET,
        request.getPath(), request.getHeaders(), new Buffer()));
    if (current.code() != 200 || current.getBody() == null) {
      return null;
    }
    Lease stored = Serialization.unmarshal(new String(current.getBody().getBytes(), StandardCharsets.UTF_8),
        Lease.class);
    for (String field : List.of("resourceVersion", "uid")) {
      Object wanted = preconditions.get(field);
      String actual = "uid".equals(field) ? stored.getMetadata().getUid() : stored.getMetadata().getResourceVersion();
      if (wanted != null && !wanted.equals(actual)) {
        String message = "Precondition failed: " + field + " in precondition: " + wanted + ", " + field
            + " in object meta: " + actual;
        return new MockResponse().setResponseCode(409).setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\","
            + "\"status\":\"Failure\",\"message\":\"" + message + "\",\"reason\":\"Conflict\",\"code\":409}");
      }
    }
    return null;
  }

  private MockResponse dispatchAndRecord(RecordedRequest request) {
    long received = System.nanoTime();
    MockResponse response = delegate.dispatch(request);
    long answered = System.nanoTime();
    String method = request.getMethod();
    String path = request.getPath();
    boolean write = "PUT".equals(method) || "POST".equals(method) || "PATCH".equals(method);
    if (write && path != null && path.startsWith(LEASES) && path.contains("/leases")
        && response.code() >= 200 && response.code() < 300 && response.getBody() != null) {
      Lease stored = Serialization.unmarshal(
          new String(response.getBody().getBytes(), StandardCharsets.UTF_8), Lease.class);
      LeaseWrite accepted = LeaseWrite.of(stored, received, answered);
      writes.add(accepted);
      // Before the response leaves: a client learns the new resourceVersion only after the listener saw it.
      listener.accept(accepted);
    }
    return response;
  }

  @Override
  public void shutdown() {
    delegate.shutdown();
  }

  @Override
  public void releaseResources() {
    delegate.releaseResources();
  }

  /** Every accepted write so far, in the order of the versions the server gave them. */
  List<LeaseWrite> writes() {
    return writes.stream().sorted(Comparator.comparingLong(LeaseWrite::resourceVersion))
        .collect(Collectors.toList());
  }
}
