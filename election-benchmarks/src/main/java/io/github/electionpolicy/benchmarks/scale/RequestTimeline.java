package io.github.electionpolicy.benchmarks.scale;

import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Every request a client sends and every answer it gets, stamped with {@link System#nanoTime()} on the client's
 * side, as an HTTP {@link Interceptor}. Clients derived from the one it is installed on share its HTTP client,
 * so the runner's own Lease client is seen too. Thread-safe.
 */
final class RequestTimeline implements Interceptor {

  /** One request sent or one answer received. */
  record Event(long nanos, boolean sent, String method, String path, int code) {

    /**
     * A short label: {@code review} (an access or a rules review), {@code get Lease}, {@code create Lease},
     * {@code update Lease}, {@code watch}.
     */
    String label() {
      if (path.endsWith("/selfsubjectaccessreviews") || path.endsWith("/selfsubjectrulesreviews")) {
        return "review";
      }
      if (path.contains("/leases")) {
        if (method.equals("GET")) {
          return path.contains("watch=true") ? "watch" : "get Lease";
        }
        return method.equals("POST") ? "create Lease" : method.equals("PUT") ? "update Lease" : method + " Lease";
      }
      return method + " " + path;
    }
  }

  private final List<Event> events = new ArrayList<>();

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    add(new Event(System.nanoTime(), true, request.method(), pathOf(request), 0));
  }

  @Override
  public void after(HttpRequest request, HttpResponse<?> response, AsyncBody.Consumer<List<ByteBuffer>> consumer) {
    add(new Event(System.nanoTime(), false, request.method(), pathOf(request), response.code()));
  }

  private static String pathOf(HttpRequest request) {
    String query = request.uri().getRawQuery();
    return request.uri().getPath() + (query == null ? "" : "?" + query);
  }

  private synchronized void add(Event event) {
    events.add(event);
  }

  /** The events from this instant on, in order. */
  synchronized List<Event> since(long nanos) {
    return events.stream().filter(e -> e.nanos() >= nanos).toList();
  }
}
