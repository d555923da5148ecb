package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The embedded server's own record of every Lease write it accepted: a decorator around the CRUD dispatcher,
 * so what it records is what the server stored. Thread-safe: the server dispatches on several threads.
 */
final class LeaseWriteLog extends Dispatcher {

  private static final String LEASES = "/apis/coordination.k8s.io/v1/namespaces/";

  private final Dispatcher delegate;
  private final List<LeaseWrite> writes = new CopyOnWriteArrayList<>();
  private final Consumer<LeaseWrite> listener;

  LeaseWriteLog(Dispatcher delegate, Consumer<LeaseWrite> listener) {
    this.delegate = delegate;
    this.listener = listener;
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
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
