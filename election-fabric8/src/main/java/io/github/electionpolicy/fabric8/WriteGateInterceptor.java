package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.util.Locale;
import java.util.Set;

/**
 * The check of a {@link WriteGate}: refuses a request that could change the cluster once the term is no longer
 * valid. fabric8 calls {@link #before} for each attempt just before handing it to the HTTP client; what it
 * throws there reaches the caller (see {@link WriteGate}).
 */
final class WriteGateInterceptor implements Interceptor {

  // Fail closed: any method that is not a read (RFC 9110's safe methods) counts as a write.
  private static final Set<String> READS = Set.of("GET", "HEAD", "OPTIONS");

  private final LeadershipTerm term;

  private final boolean endedOnly;

  WriteGateInterceptor(LeadershipTerm term) {
    this(term, RunnerFlaw.NONE);
  }

  /** @param flaw the simulation's broken variant {@link RunnerFlaw#GATE_CHECKS_ENDED_ONLY}, or none */
  WriteGateInterceptor(LeadershipTerm term, RunnerFlaw flaw) {
    this.term = term;
    this.endedOnly = flaw == RunnerFlaw.GATE_CHECKS_ENDED_ONLY;
  }

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    String method = request.method() == null ? "GET" : request.method().toUpperCase(Locale.ROOT);
    if (!READS.contains(method) && (endedOnly ? term.hasEnded() : !term.isValid())) {
      throw new TermEndedException(method, request.uri().getRawPath(), term);
    }
  }
}
