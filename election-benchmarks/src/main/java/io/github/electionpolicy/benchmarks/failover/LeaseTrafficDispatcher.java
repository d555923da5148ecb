package io.github.electionpolicy.benchmarks.failover;

import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Wraps the mock server's CRUD dispatcher to count, on the server side, every request on a Lease and to say
 * which replica sent it (from the {@code User-Agent} that the test fixture's {@code LeaseApi.replica(name)}
 * gives each replica's client). A crashed replica is fenced: the server answers its requests with 503 and applies none,
 * as if its process were gone. Thread-safe.
 */
final class LeaseTrafficDispatcher extends Dispatcher {

  /** Prefix of the {@code User-Agent} of replica clients; the identity follows it. */
  static final String USER_AGENT_PREFIX = LeaseApi.USER_AGENT_PREFIX;

  private final Dispatcher delegate;
  private final EventLog log;
  private final Set<String> fenced = ConcurrentHashMap.newKeySet();

  LeaseTrafficDispatcher(Dispatcher delegate, EventLog log) {
    this.delegate = delegate;
    this.log = log;
  }

  void fence(String identity) {
    fenced.add(identity);
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    String path = request.getPath();
    String replica = replicaOf(request);
    boolean lease = path != null && path.contains("/leases");
    if (replica != null && fenced.contains(replica)) {
      if (lease) {
        log.record(EventKind.LEASE_REQUEST, replica, request.getMethod() + " 503(fenced) " + path);
      }
      return new MockResponse().setResponseCode(503);
    }
    MockResponse response = delegate.dispatch(request);
    if (lease && replica != null) {
      String method = request.getMethod().toUpperCase(Locale.ROOT);
      int code = response.code();
      String detail = method + " " + code + " " + path;
      log.record(EventKind.LEASE_REQUEST, replica, detail);
      boolean write = method.equals("POST") || method.equals("PUT") || method.equals("PATCH");
      if (write && code >= 200 && code < 300) {
        log.record(EventKind.LEASE_WRITE_OK, replica, detail);
      }
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

  private static String replicaOf(RecordedRequest request) {
    String agent = request.getHeader("User-Agent");
    if (agent == null || !agent.startsWith(USER_AGENT_PREFIX)) {
      return null;
    }
    return agent.substring(USER_AGENT_PREFIX.length());
  }
}
