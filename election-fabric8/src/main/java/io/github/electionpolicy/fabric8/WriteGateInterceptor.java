package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.util.Locale;
import java.util.Set;

/**
 * The check of a {@link WriteGate}: refuses a request that could change the cluster once the term is no longer
 * valid, or when the gate's {@link WriteGate.Check} refuses it. fabric8 calls {@link #before} for each attempt just before handing it to the HTTP client; what it
 * throws there reaches the caller (see {@link WriteGate}).
 */
final class WriteGateInterceptor implements Interceptor {

  // Fail closed: any method that is not a read (RFC 9110's safe methods) counts as a write.
  private static final Set<String> READS = Set.of("GET", "HEAD", "OPTIONS");

  private final WriteGate.Check check;

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
  }

  /** A gate whose writes {@code check} decides on. */
  WriteGateInterceptor(WriteGate.Check check) {
    this.check = check;
  }

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    String method = request.method() == null ? "GET" : request.method().toUpperCase(Locale.ROOT);
    if (!READS.contains(method)) {
      check.beforeWrite(method, request.uri().getRawPath());
    }
  }
}
