package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRuleBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectRulesReviewStatus;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.internal.SimpleRequest;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * In front of the CRUD dispatcher: answers SelfSubjectAccessReviews the way an API server does (allowed unless
 * the verb is denied), which the CRUD store cannot do (it rejects a review, which has no name, with HTTP 422),
 * and SelfSubjectRulesReviews with one rule that allows every verb but the denied ones on everything (unless a
 * test registered an expectation for either review path: then the rules review is left to the CRUD store, which
 * refuses it, so the access reviews the test set up decide),
 * and counts requests per replica from the {@code User-Agent} the fixture gives each replica's client. An
 * expectation a test registers on the mock server for the review path wins over the fixture's answer.
 * Thread-safe.
 */
final class EmbeddedDispatcher extends Dispatcher {

  static final String ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
  static final String RULES_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";
  private static final List<String> VERBS =
      List.of("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection");

  private final Dispatcher delegate;
  private final Map<ServerRequest, Queue<ServerResponse>> expectations;
  private final boolean answerAccessReviews;
  private final Map<String, AtomicInteger> requestsByReplica = new ConcurrentHashMap<>();
  private volatile Set<String> deniedVerbs = Set.of();

  EmbeddedDispatcher(Dispatcher delegate, Map<ServerRequest, Queue<ServerResponse>> expectations,
      boolean answerAccessReviews) {
    this.delegate = delegate;
    this.expectations = expectations;
    this.answerAccessReviews = answerAccessReviews;
  }

  void deny(Set<String> verbs) {
    deniedVerbs = Set.copyOf(verbs);
  }

  int requestCount(String replica) {
    AtomicInteger count = requestsByReplica.get(replica);
    return count == null ? 0 : count.get();
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    String agent = request.getHeader("User-Agent");
    if (agent != null && agent.startsWith(LeaseApi.USER_AGENT_PREFIX)) {
      requestsByReplica.computeIfAbsent(agent.substring(LeaseApi.USER_AGENT_PREFIX.length()),
          name -> new AtomicInteger()).incrementAndGet();
    }
    if (answerAccessReviews && "POST".equals(request.getMethod()) && ACCESS_REVIEWS.equals(request.getPath())
        && !expected(request.getPath())) {
      return review(request);
    }
    if (answerAccessReviews && "POST".equals(request.getMethod()) && RULES_REVIEWS.equals(request.getPath())
        && !expected(RULES_REVIEWS) && !expected(ACCESS_REVIEWS)) {
      return rules(request);
    }
    return delegate.dispatch(request);
  }

  private boolean expected(String path) {
    Queue<ServerResponse> any = expectations.get(new SimpleRequest(path));
    Queue<ServerResponse> post = expectations.get(new SimpleRequest(HttpMethod.POST, path));
    return (any != null && !any.isEmpty()) || (post != null && !post.isEmpty());
  }

  private MockResponse review(RecordedRequest request) {
    SelfSubjectAccessReview review = Serialization.unmarshal(request.getUtf8Body(), SelfSubjectAccessReview.class);
    String verb = review.getSpec() == null || review.getSpec().getResourceAttributes() == null
        ? null : review.getSpec().getResourceAttributes().getVerb();
    SubjectAccessReviewStatus status = new SubjectAccessReviewStatus();
    status.setAllowed(verb != null && !deniedVerbs.contains(verb));
    if (!status.getAllowed()) {
      status.setReason("the test denied the verb \"" + verb + "\" (LeaseApi.denyAccess)");
    }
    review.setStatus(status);
    return new MockResponse().setResponseCode(201)
        .setHeader("Content-Type", "application/json")
        .setBody(Serialization.asJson(review));
  }

  private MockResponse rules(RecordedRequest request) {
    SelfSubjectRulesReview review = Serialization.unmarshal(request.getUtf8Body(), SelfSubjectRulesReview.class);
    Set<String> denied = deniedVerbs;
    SubjectRulesReviewStatus status = new SubjectRulesReviewStatus();
    status.setIncomplete(false);
    status.setResourceRules(List.of(new ResourceRuleBuilder().withApiGroups("*").withResources("*")
        .withVerbs(VERBS.stream().filter(verb -> !denied.contains(verb)).toList()).build()));
    status.setNonResourceRules(List.of());
    review.setStatus(status);
    return new MockResponse().setResponseCode(201)
        .setHeader("Content-Type", "application/json")
        .setBody(Serialization.asJson(review));
  }

  @Override
  public void shutdown() {
    delegate.shutdown();
  }

  @Override
  public void releaseResources() {
    delegate.releaseResources();
  }
}
