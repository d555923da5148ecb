package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * The server's own record of every Lease write it accepted, in the order of the resourceVersions it gave
 * them: a decorator around the mock API server's dispatcher, so what it records is what the server stored,
 * not what a client believes it sent. Each write carries the monotonic instants at which the server began
 * and finished handling it.
 */
final class LeaseWriteLog extends Dispatcher {

  /**
   * One accepted create or update of the Lease.
   *
   * @param receivedNanos when the server began handling the request (no client saw the result earlier)
   * @param answeredNanos when the server had stored it
   * @param resourceVersion the version the server gave the stored object
   * @param spec the stored spec
   */
  record Write(long receivedNanos, long answeredNanos, long resourceVersion, LeaseSpec spec) {

    String holder() {
      return spec == null || spec.getHolderIdentity() == null ? "" : spec.getHolderIdentity().trim();
    }

    long leaseDurationNanos() {
      Integer seconds = spec == null ? null : spec.getLeaseDurationSeconds();
      return seconds == null ? 0 : seconds * 1_000_000_000L;
    }
  }

  private final Dispatcher delegate;
  private final String leasePath;
  private final List<Write> writes = new CopyOnWriteArrayList<>();

  LeaseWriteLog(Dispatcher delegate, String namespace) {
    this.delegate = delegate;
    this.leasePath = "/apis/coordination.k8s.io/v1/namespaces/" + namespace + "/leases";
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    long received = System.nanoTime();
    MockResponse response = delegate.dispatch(request);
    long answered = System.nanoTime();
    String method = request.getMethod();
    boolean write = "PUT".equals(method) || "POST".equals(method) || "PATCH".equals(method);
    if (write && request.getPath() != null && request.getPath().startsWith(leasePath)
        && response.code() >= 200 && response.code() < 300 && response.getBody() != null) {
      Lease stored = Serialization.unmarshal(
          new String(response.getBody().getBytes(), StandardCharsets.UTF_8), Lease.class);
      writes.add(new Write(received, answered, Long.parseLong(stored.getMetadata().getResourceVersion()),
          stored.getSpec()));
    }
    return response;
  }

  @Override
  public void shutdown() {
    delegate.shutdown();
  }

  /**
   * Forwards fabric8 8.x's {@code Dispatcher.releaseResources()} (the mixed dispatcher closes its watches
   * there). fabric8 7.x has no such method; declared without {@code @Override} and called reflectively, it
   * overrides on 8.x and is never called on 7.x, so these tests compile and run against both.
   */
  public void releaseResources() {
    Method release;
    try {
      release = delegate.getClass().getMethod("releaseResources");
    } catch (NoSuchMethodException onFabric8Version7) {
      return;
    }
    try {
      release.invoke(delegate);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(e.getCause());
    }
  }

  /** Every accepted write so far, in the server's order. */
  List<Write> writes() {
    return writes.stream().sorted(Comparator.comparingLong(Write::resourceVersion)).collect(Collectors.toList());
  }
}
