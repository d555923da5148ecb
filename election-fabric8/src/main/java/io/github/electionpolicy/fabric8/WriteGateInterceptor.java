package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.http.StandardHttpRequest;
import java.net.URI;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * The check of a {@link WriteGate}: refuses a request that could change the cluster once the term is no longer
 * valid, or when the gate's {@link WriteGate.Check} refuses it, and sends a write with the body the check's {@link
 * WriteGate.Check#bodyToSend} returns. fabric8 calls {@link #before} for each attempt just before handing it to the
 * HTTP client; what it throws there reaches the caller (see {@link WriteGate}).
 */
final class WriteGateInterceptor implements Interceptor {

  // Fail closed: any method that is not a read (RFC 9110's safe methods) counts as a write.
  private static final Set<String> READS = Set.of("GET", "HEAD", "OPTIONS");
  private static final String JSON = "application/json";

  private final WriteGate.Check check;
  // Whether the check may change a write's body: a check of the user's own (WriteGate.gate(client, check)); a term's
  // never does, so its writes go without reading their body.
  private final boolean mayChangeBodies;
  // The raw path of the client's master URL, without its trailing slash ("" when it has none): a proxy in front of the
  // API server (Rancher's /k8s/clusters/ID, kubectl proxy --api-prefix) puts it before every request's path, and a
  // check of the user's own is given the path below it, /api/... or /apis/..., whatever the master URL.
  private final String apiPrefix;

  WriteGateInterceptor(LeadershipTerm term) {
    this(term, RunnerFlaw.NONE);
  }

  /** @param flaw the simulation's broken variant {@link RunnerFlaw#GATE_CHECKS_ENDED_ONLY}, or none */
  WriteGateInterceptor(LeadershipTerm term, RunnerFlaw flaw) {
    boolean endedOnly = flaw == RunnerFlaw.GATE_CHECKS_ENDED_ONLY;
    this.check = (method, path) -> {
      if (endedOnly ? term.hasEnded() : !term.isValid()) {
        throw new TermEndedException(method, path, term);
      }
    };
    this.mayChangeBodies = false;
    this.apiPrefix = "";
  }

  /**
   * A gate whose writes {@code check} decides on.
   *
   * @param masterUrl the client's master URL, whose path (if any) is taken off each request's before the check sees it
   */
  WriteGateInterceptor(WriteGate.Check check, String masterUrl) {
    this.check = check;
    this.mayChangeBodies = true;
    this.apiPrefix = pathOf(masterUrl);
  }

  private static String pathOf(String masterUrl) {
    String path;
    try {
      path = masterUrl == null ? null : URI.create(masterUrl).getRawPath();
    } catch (IllegalArgumentException notAUri) {
      path = null;
    }
    if (path == null) {
      return "";
    }
    return path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
  }

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    String method = request.method() == null ? "GET" : request.method().toUpperCase(Locale.ROOT);
    if (READS.contains(method)) {
      return;
    }
    String path = request.uri().getRawPath();
    if (!apiPrefix.isEmpty() && path != null && path.startsWith(apiPrefix + "/")) {
      path = path.substring(apiPrefix.length());
    }
    check.beforeWrite(method, path);
    if (!mayChangeBodies) {
      return;
    }
    String contentType = contentType(request);
    String body = request.bodyString();
    String toSend = check.bodyToSend(method, path, contentType, body);
    if (Objects.equals(toSend, body)) {
      return;
    }
    // fabric8 7.4 to 8.0 hand each interceptor the StandardHttpRequest.Builder the attempt is built from, whose
    // method(method, contentType, body) replaces the body: the request is sent with the one the check returned.
    if (!(builder instanceof HttpRequest.Builder requestBuilder) || toSend == null) {
      throw new KubernetesClientException("refused " + method + " " + path + ": the write gate's check changes its "
          + "body, which this request (" + builder.getClass().getName() + ") cannot carry; the request was not sent");
    }
    requestBuilder.method(request.method(), contentType == null ? JSON : contentType, toSend);
  }

  /** The request's content type: fabric8 keeps it beside the headers, and sets the header only when it sends. */
  private static String contentType(HttpRequest request) {
    if (request instanceof StandardHttpRequest standard && standard.getContentType() != null) {
      return standard.getContentType();
    }
    return request.header("Content-Type");
  }
}
